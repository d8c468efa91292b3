"""Data: the canonical passage schema and the loaders that produce it."""

from hallulab.core.errors import RecordError
from hallulab.data.schema import LABEL_VALUES, Record, record_from_dict

__all__ = ["LABEL_VALUES", "Record", "RecordError", "record_from_dict"]
