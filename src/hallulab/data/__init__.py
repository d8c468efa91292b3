"""Data: the canonical passage schema and the loaders that produce it."""

from hallulab.data.schema import LABEL_VALUES, Passage, passage_from_dict
from hallulab.errors import RecordError

__all__ = ["LABEL_VALUES", "Passage", "RecordError", "passage_from_dict"]
