"""DVC stage `correct`: hallucination correction at three levels, under Table 3's released
threshold rule and this project's development-split one, and its judged factuality
(FactSelfCheck §4.5, Table 3; :mod:`hallulab.correction`).

Writes data/corrected/<dataset>/corrections.json (every corrected passage, its flagged
sentences or facts and the judge's verdicts) and metrics/<dataset>/correction.json (Table 3).
"""

from __future__ import annotations

import argparse
import dataclasses

import pandas as pd

from hallulab.artifacts.knowledge_graphs import graphs_by_record
from hallulab.core.call_cache import CallCache
from hallulab.core.config import typed
from hallulab.core.io import write_json
from hallulab.correction.knobs import CorrectionKnobs
from hallulab.correction.run import correct, table3, table3_p_no
from hallulab.data.records import load_jsonl_records
from hallulab.pipeline import paths, registry
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.resources import Resources
from hallulab.pipeline.runner import read_artifacts, run_stage, stage_logger, write_run_log
from hallulab.pipeline.stage_inputs import CORRECTION_INPUTS, CORRECTION_PROMPTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args()
    log = stage_logger("correct")
    view = ParamsView.load(args.params, CORRECTION_INPUTS.param_keys(), "correct")
    raw = {k: v for k, v in view.get("correction").items() if k not in ("prompts", "by_profile")}
    cfg = typed(CorrectionKnobs, raw, "correction")
    registry.check_method_name(cfg.sentence_method, "correction.sentence_method")
    registry.check_method_name(cfg.fact_method, "correction.fact_method")
    records = load_jsonl_records(paths.records(args.dataset))
    graphs = graphs_by_record(read_artifacts(["knowledge_graphs"], args.dataset)["knowledge_graphs"])
    sentence_frame = pd.read_parquet(paths.unit_scores(cfg.sentence_method, args.dataset))
    fact_frame = pd.read_parquet(paths.unit_scores(cfg.fact_method, args.dataset))
    with CallCache() as cache:
        resources = Resources(view, cache)
        prompts = {name: resources.prompt(f"correction.prompts.{name}") for name in CORRECTION_PROMPTS}
        try:
            jobs, diagnostics = correct(
                records,
                sentence_frame,
                fact_frame,
                graphs,
                cfg,
                prompts,
                resources.llm("corrector"),
                resources.llm("judge"),
            )
        finally:
            resources.close()
        stats = cache.stats.as_dict()
    write_json(paths.corrections(args.dataset), [dataclasses.asdict(job) for job in jobs])
    result = {
        "table3": table3(jobs),
        # the judge's first-token P(No) reading, where the judge is white-box (else null)
        "table3_p_no": table3_p_no(jobs) if any(p is not None for job in jobs for p in job.p_no) else None,
        "corrector": resources.llm_name("corrector"),
        "judge": resources.llm_name("judge"),
        "fact_detector": f"{cfg.fact_method}/{cfg.fact_variant}",
        "sentence_detector": f"{cfg.sentence_method}/{cfg.sentence_variant}",
        **diagnostics,
    }
    write_json(paths.correction_metrics(args.dataset), result)
    log.info("correction: %s", result)
    write_run_log("correct", args.dataset, {"cache": stats})


if __name__ == "__main__":
    run_stage("correct", main)
