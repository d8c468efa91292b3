"""Data: the canonical passage schema and the loaders that produce it."""

from hallulab.core.errors import RecordError
from hallulab.data.schema import LABEL_VALUES, Passage, passage_from_dict

__all__ = ["LABEL_VALUES", "Passage", "RecordError", "passage_from_dict"]
