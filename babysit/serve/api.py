"""The `/api/metrics` document: versioned, validated by the schema shipped beside it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timezone
from functools import cache
from importlib import resources
from typing import Any

from babysit import lazy_re
from babysit.model import utc_text

# 2: a non-finite value in `latest` is "nan"/"inf"/"-inf", as in the artifact (1: null).
API_VERSION = 2


# The run's page on its service (W&B, MLflow, Vertex AI): a web address and nothing else.
# The page draws it as a link, so `javascript:` or `data:` would run in the page.
_WEB_URL = lazy_re.compile(r"https?://[!-~]{1,2000}")


def metrics_document(runs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    return {"api_version": API_VERSION,
            "generated_at": utc_text(datetime.now(timezone.utc)),
            "runs": [_with_safe_url(run) for run in runs]}


def _with_safe_url(run: dict[str, Any]) -> dict[str, Any]:
    url = run.get("url")
    if url is None or (isinstance(url, str) and _WEB_URL.fullmatch(url)):
        return run
    return {**run, "url": None}


@cache
def api_schema() -> dict[str, Any]:
    text = resources.files("babysit").joinpath("schema/api-metrics.schema.json").read_text(
        encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
