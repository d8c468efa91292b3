"""What SelfCheckGPT-MQAG's score step stores: per sentence, its questions with their answer
distributions and answerability scores. NumPy only, so that the method's declaration (its
``raw`` class) imports nothing heavier."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hallulab.core.errors import StaleScoresError


@dataclass(frozen=True)
class MQAGQuestion:
    """One generated question with its answer distributions and answerability scores."""

    question: str
    options: tuple[str, ...]
    answer_index: int  # position of G1's answer among the options
    p_response: np.ndarray  # (4,) P_A(o | q, R)
    u_response: float  # P_U(answerable | q, R)
    p_samples: np.ndarray  # (N_max, 4)
    u_samples: np.ndarray  # (N_max,)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "options": list(self.options),
            "answer_index": self.answer_index,
            "p_response": self.p_response.tolist(),
            "u_response": self.u_response,
            "p_samples": self.p_samples.tolist(),
            "u_samples": self.u_samples.tolist(),
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> MQAGQuestion:
        return cls(
            question=raw["question"],
            options=tuple(raw["options"]),
            answer_index=int(raw["answer_index"]),
            p_response=np.asarray(raw["p_response"], dtype=np.float64),
            u_response=float(raw["u_response"]),
            p_samples=np.asarray(raw["p_samples"], dtype=np.float64).reshape(-1, len(raw["options"])),
            u_samples=np.asarray(raw["u_samples"], dtype=np.float64),
        )

    def restricted(self, columns: np.ndarray) -> MQAGQuestion:
        """The same question seen through a subset of the samples."""
        return MQAGQuestion(
            self.question,
            self.options,
            self.answer_index,
            self.p_response,
            self.u_response,
            self.p_samples[columns],
            self.u_samples[columns],
        )


@dataclass(frozen=True)
class StoredMQAG:
    """Per passage, per sentence, its questions; plus identity and diagnostics."""

    identity: Mapping[str, Any]
    questions: Mapping[str, list[list[MQAGQuestion]]]
    diagnostics: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": "selfcheck_mqag",
            "identity": dict(self.identity),
            "diagnostics": dict(self.diagnostics),
            "questions": {
                pid: [[q.to_dict() for q in sentence] for sentence in sentences]
                for pid, sentences in self.questions.items()
            },
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "") -> StoredMQAG:
        unknown = sorted(set(raw) - {"method", "identity", "diagnostics", "questions"})
        missing = [key for key in ("identity", "questions") if key not in raw]
        if unknown or missing or raw.get("method", "selfcheck_mqag") != "selfcheck_mqag":
            problem = f"missing {missing}, unknown {unknown}, method {raw.get('method')!r}"
            raise StaleScoresError(where, cls.__name__, problem)
        # a question without its fields: MethodSpec.read_raw names the file
        questions = {
            pid: [[MQAGQuestion.from_dict(q) for q in sentence] for sentence in sentences]
            for pid, sentences in raw["questions"].items()
        }
        return cls(raw["identity"], questions, raw.get("diagnostics", {}))
