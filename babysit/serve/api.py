"""The `/api/metrics` document: versioned, validated by the schema shipped beside it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timezone
from functools import cache
from importlib import resources
from typing import Any

# 2: a non-finite value in `latest` is "nan"/"inf"/"-inf", as in the artifact (1: null).
API_VERSION = 2


def metrics_document(runs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    return {"api_version": API_VERSION,
            "generated_at": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
            "runs": list(runs)}


@cache
def api_schema() -> dict[str, Any]:
    text = resources.files("babysit").joinpath("schema/api-metrics.schema.json").read_text(
        encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
