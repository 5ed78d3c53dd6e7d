"""The files Sem-Ent writes beside a report, through its output hook: the fitted clusters
(``--save-sem-ent-clusters DIR``, saved by the step itself) and the plot of its cluster
distribution (``--plot DIR``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dialeval.metrics.engines.metric_spec import Arguments, OutputHook, SystemReport

#: The file ``--plot DIR`` writes for Sem-Ent (one input; ``NAME_sem_ent_clusters.png`` per system
#: for several).
SEM_ENT_PLOT = "sem_ent_clusters.png"


def plot_path(plot_dir: str, name: str, num_systems: int) -> Path:
    """Where ``--plot DIR`` draws the cluster distribution of system ``name``."""
    return Path(plot_dir) / (SEM_ENT_PLOT if num_systems == 1 else f"{name}_{SEM_ENT_PLOT}")


def _planned(arguments: Arguments, systems: Sequence[str]) -> list[tuple[str, Path | str]]:
    # the clusters' file names: deferred with the numpy code that writes them
    from dialeval.metrics.sem_ent.clusters import CONFIG_FILE, TENSORS_FILE

    planned: list[tuple[str, Path | str]] = []
    folder = arguments.get("save_sem_ent_clusters")
    if folder:
        planned += [
            ("--save-sem-ent-clusters", Path(folder) / name) for name in (CONFIG_FILE, TENSORS_FILE)
        ]
    elif folder == "":  # refused by the output checks, by its flag
        planned.append(("--save-sem-ent-clusters", ""))
    if arguments.get("plot"):
        planned += [
            ("--plot", plot_path(arguments["plot"], name, len(systems))) for name in systems
        ]
    return planned


def _check(
    arguments: Arguments, options: object, planned_steps: Sequence[str], num_systems: int
) -> None:
    """``--plot`` on one input draws only Sem-Ent's clusters: refused when Sem-Ent will not run,
    rather than a run that ends well and writes no plot."""
    plot = arguments.get("plot")
    if plot is None or num_systems > 1 or "sem_ent" in planned_steps:
        return
    metrics = getattr(options, "metrics", None)
    left_out = metrics is not None and "sem_ent" not in metrics
    raise ValueError(
        f"--plot {plot} draws Sem-Ent's cluster distribution, and Sem-Ent "
        "does not run here: "
        + (
            "--metric leaves it out"
            if left_out
            else "it needs --reference-corpus TXT (to fit its clusters on) or --sem-ent-clusters "
            "DIR (saved ones)"
        )
        + "; with several inputs --plot also draws each per-set figure"
    )


def _write(arguments: Arguments, system: SystemReport) -> list[str]:
    plot = arguments.get("plot")
    if not plot:
        return []
    path = plot_path(plot, system.name, system.num_systems)
    if "sem_ent" not in system.report["metrics"]:  # planned but skipped (its reason is printed)
        return [f"plot: no {path.name}: sem_ent was skipped"]
    # matplotlib: deferred so the CLI's --help stays light
    from dialeval.metrics.sem_ent.plot import plot_cluster_distribution

    summary = system.report["metrics"]["sem_ent"]
    written = plot_cluster_distribution(
        summary["cluster_distribution"],
        path,
        title=Path(system.source).name,
        reference_distribution=summary["reference_distribution"],
    )
    return [f"plot: {written}"]


OUTPUTS = OutputHook(
    _planned,
    write=_write,
    check=_check,
    plot_help="sem_ent_clusters.png: Sem-Ent's sorted cluster distribution "
    "(paper Fig. 2/3; needs --reference-corpus or --sem-ent-clusters)",
)
