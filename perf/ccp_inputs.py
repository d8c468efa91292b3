"""CCP's inputs read from a data set's workspace artifacts, as the `score_ccp` stage reads
them, for the benchmarks that time or re-score CCP's NLI pairs (bench_ccp, check_ccp_bfloat16).
Run from the repository root after the data set's artifacts exist (`dvc exp run -S dataset=...`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hallulab.artifacts.claims import claims_by_record
from hallulab.artifacts.response_tokens import TokenStats, token_stats
from hallulab.artifacts.sentences import spans_by_record
from hallulab.core.config import typed
from hallulab.data.records import load_jsonl_records
from hallulab.data.schema import Record
from hallulab.methods.ccp.knobs import CCPScoreKnobs
from hallulab.methods.ccp.score import NLIRequests, nli_requests
from hallulab.pipeline import paths
from hallulab.pipeline.runner import read_artifacts


@dataclass(frozen=True)
class CCPInputs:
    """The responses, their token statistics (parsed once, in :meth:`read`), the raw
    artifacts holding claims and sentence spans, and the knobs."""

    records: list[Record]
    artifacts: Mapping[str, Any]
    knobs: CCPScoreKnobs
    token_stats: dict[str, list[TokenStats]]

    @classmethod
    def read(cls, dataset: str, score_params: Mapping[str, Any]) -> CCPInputs:
        """``score_params``: the ``ccp.score`` params section."""
        records = [p for p in load_jsonl_records(paths.records(dataset)) if p.response is not None]
        artifacts = read_artifacts(["response_tokens", "claims", "sentences"], dataset)
        knobs = typed(CCPScoreKnobs, score_params, "ccp.score")
        return cls(records, artifacts, knobs, token_stats(artifacts["response_tokens"]))

    @property
    def top_k(self) -> int:
        return int(self.artifacts["response_tokens"]["top_k"])

    def requests(self) -> NLIRequests:
        """CCP's NLI requests: every word's K options against the word, in each context."""
        return nli_requests(
            self.records,
            self.token_stats,
            claims_by_record(self.artifacts["claims"]),
            spans_by_record(self.artifacts["sentences"]),
            self.knobs.nli_contexts,
            self.top_k,
        )
