"""What gcloud is set to use, read from its own configuration files: the region of
Vertex AI commands (`gcloud config set ai/region REGION`).

gcloud keeps properties in `CONFIG_DIR/configurations/config_NAME` (INI: `[ai]
region = …`), the active configuration's NAME in `CONFIG_DIR/active_config`; the
directory is `$CLOUDSDK_CONFIG` or `~/.config/gcloud`, and a property is overridden by
`CLOUDSDK_<SECTION>_<NAME>` (`CLOUDSDK_AI_REGION`), the configuration by
`CLOUDSDK_ACTIVE_CONFIG_NAME`. Nothing is run: babysit does not need gcloud installed.
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Mapping
from pathlib import Path

from babysit import lazy_re

_MAX_BYTES = 65536  # a gcloud configuration is a few lines
_NAME = lazy_re.compile(r"^[a-z][a-z0-9-]{0,62}$")


def _read(path: Path) -> str:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            return handle.read(_MAX_BYTES)
    except OSError:
        return ""


def gcloud_region(environ: Mapping[str, str] | None = None) -> str | None:
    """gcloud's `ai/region`, or None when it is not set (or not a region)."""
    from babysit.targets.vertex.names import check_region

    env = os.environ if environ is None else environ
    value = env.get("CLOUDSDK_AI_REGION", "").strip()
    if not value:
        directory = Path(env.get("CLOUDSDK_CONFIG") or Path.home() / ".config" / "gcloud")
        name = (env.get("CLOUDSDK_ACTIVE_CONFIG_NAME")
                or _read(directory / "active_config").strip() or "default")
        if not _NAME.match(name):
            return None
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(_read(directory / "configurations" / f"config_{name}"))
        except configparser.Error:
            return None
        value = parser.get("ai", "region", fallback="").strip()
    try:
        return check_region(value) if value else None
    except ValueError:
        return None
