"""provenance.json: package and dependency versions, input checksums, options, counts, files."""

from __future__ import annotations

import sys
from typing import Any

from _empathic_base.results import json_ready
from longitudinal._output import csv_is_raw, sha256
from longitudinal.report.context import (
    EXCLUSIONS_FILE,
    NOTES_FILE,
    PROVENANCE_FILE,
    REPORT_FILE,
    ReportContext,
)


def provenance(ctx: ReportContext) -> dict[str, Any]:
    """Collect what a reader needs to reproduce the report (no raw ids, no file contents)."""
    from surveys import __version__

    study = ctx.study
    inputs = {}
    for rel in study.inputs:
        path = study.root / rel
        if path.is_file():
            inputs[rel] = sha256(path)
    versions = {}
    for module in ("numpy", "pandas", "scipy", "statsmodels", "matplotlib", "seaborn"):
        mod = sys.modules.get(module)
        versions[module] = getattr(mod, "__version__", None) if mod is not None else None
    truth = study.root / "truth.json"
    return {
        "package": "empathic-longitudinal",
        "version": __version__,
        "study": {"name": study.config.name, "directory": study.root.name},
        "inputs_sha256": dict(sorted(inputs.items())),
        "truth_json_sha256": sha256(truth) if truth.is_file() else None,
        "options": ctx.options.as_dict(),
        "raw_csv": csv_is_raw(),  # --raw-csv: CSV text cells written without the apostrophe
        "pseudonym_key_fingerprint": ctx.key_fingerprint,
        "seed": ctx.options.seed,
        "python": ".".join(map(str, sys.version_info[:3])),
        "dependencies": versions,
        "scoring": {"min_valid": study.config.min_valid, "prorate": study.config.prorate},
        "growth_time": {"unit": ctx.growth_time_unit, **ctx.growth_time},
        "counts": {
            "participants": len(study.participants),
            "sessions": len(study.sessions),
            "ratings": len(study.ratings),
            "exclusions": len(study.exclusions),
        },
        **(
            {"imputation": json_ready(ctx.results["change_imputed"]["imputation"])}
            if "change_imputed" in ctx.results  # the change section's multiple imputation
            else {}
        ),
        "notes": list(ctx.notes),
        "files": sorted(
            [REPORT_FILE, EXCLUSIONS_FILE, NOTES_FILE, PROVENANCE_FILE]
            + [f"tables/{n}.csv" for n in ctx.tables]
            + [f for f, _ in ctx.figures.values()]
            + [
                vector
                for f, _ in ctx.figures.values()
                for suffix in (".svg", ".pdf")
                if (ctx.out / (vector := f.removesuffix(".png") + suffix)).is_file()
            ]
        ),
    }
