"""A non-main process of evaluate's distributed mode, for tests/metrics/test_module_conformance.py.

``python evaluate_worker.py JOB.json``: for each module in the job, in order, load it as process
``process_id`` of ``num_process`` (same ``experiment_id`` and ``cache_dir`` as the main process),
queue this process's inputs with ``add_batch`` and call ``compute()``, which returns None off the
main process; writes ``{name: compute's return}`` to the job's ``out`` file.
"""

import json
import sys

import evaluate


def main(job_path: str) -> None:
    with open(job_path, encoding="utf-8") as handle:
        job = json.load(handle)
    returned = {}
    for item in job["modules"]:
        module = evaluate.load(
            item["path"],
            num_process=job["num_process"],
            process_id=job["process_id"],
            experiment_id=item["experiment_id"],
            cache_dir=job["cache_dir"],
            timeout=job["timeout"],
        )
        module.add_batch(**item["inputs"])
        returned[item["name"]] = module.compute()
    with open(job["out"], "w", encoding="utf-8") as handle:
        json.dump(returned, handle)


if __name__ == "__main__":
    main(sys.argv[1])
