"""Every anomaly type is in the catalogue; every registered kind of target is on the
command line; the kinds' flags and options are checked from the table alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from babysit.model import AnomalyType
from babysit.rules.catalog import CATALOG
from babysit.rules.stream import METRIC_RULES
from babysit.targets.base import TargetError
from babysit.targets.kinds import KindUsageError, require_extra
from babysit.targets.registry import CLAIM_ORDER, KINDS, all_options, rewatch_args, select
from tests.test_cli import babysit


def test_every_anomaly_type_has_a_catalogue_entry():
    assert set(CATALOG) == set(AnomalyType)
    for entry in CATALOG.values():
        assert entry.fix.endswith(".")
        if entry.proposals:
            assert entry.proposal_reason


def test_every_metric_rule_follows_the_protocol():
    from babysit.config import RuleSettings

    for make in METRIC_RULES:
        rule = make(RuleSettings())
        assert isinstance(rule.windowed, bool) and callable(rule.observe)


def test_every_kind_has_its_flag_and_options_in_the_help(tmp_path: Path):
    done = babysit("watch", "--help", cwd=tmp_path)
    assert done.returncode == 0
    text = done.stdout
    for kind in KINDS:
        assert (kind.flag or "TARGET") in text, kind.name
        assert kind.panel in text or kind.flag is None
    for flag in all_options():
        assert flag in text


def values(**given: object) -> dict[str, object]:
    out: dict[str, object] = {o.dest: None for o in all_options().values()}
    out.update({k.flag.lstrip("-"): None for k in KINDS if k.flag})
    out.update(given)
    return out


def test_a_positional_target_is_claimed_by_the_first_kind_that_knows_it():
    assert select(values(), "user@gpu-box:/runs/train.log").kind == "remote-log"
    assert select(values(), "./train.log").kind == "local-log"


@pytest.mark.parametrize("given, positional, message", [
    ({"pid": 5, "mlflow": "abc"}, None, "watch one thing at a time"),
    ({"mlflow": "abc"}, "train.log", "cannot be given with it"),
    ({"tracking_uri": "http://x"}, "train.log", "--tracking-uri only makes sense with --mlflow"),
    ({"restart_cmd": "python t.py"}, "train.log", "--restart-cmd only makes sense with"),
    ({"pid": 5, "restart_cmd": "'unclosed"}, None, "--restart-cmd: No closing quotation"),
    ({}, None, "nothing to watch"),
])
def test_usage_errors_come_from_the_table(given, positional, message):
    with pytest.raises(KindUsageError, match=message):
        select(values(**given), positional)


def test_rewatch_repeats_the_kind_and_its_options_but_not_a_restart_command():
    request = select(values(pid=42, restart_cmd="torchrun t.py --token s3cr3t",
                            ssh_accept_new=True), "user@h:/r/train.log")
    assert rewatch_args(request, ["--once"]) == ["--pid=42", "--ssh-accept-new", "--once",
                                                 "--", "user@h:/r/train.log"]


ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_schema_names_every_kind_and_no_other():
    schema = json.loads((ROOT / "babysit" / "schema" / "babysit-training.schema.json")
                        .read_text())
    assert set(schema["properties"]["target_type"]["enum"]) == {k.name for k in KINDS}


def test_every_positional_kind_has_its_place_in_the_claim_order():
    assert sorted(k.name for k in CLAIM_ORDER) == sorted(k.name for k in KINDS if k.flag is None)
    assert CLAIM_ORDER[-1].name == "local-log"  # it claims every path


def test_every_declared_extra_exists_and_says_how_to_install_it():
    extras = _pyproject()["project"]["optional-dependencies"]
    for kind in KINDS:
        if kind.extra is None:
            with pytest.raises(ValueError):
                require_extra(kind, "watching it")
            continue
        assert kind.extra in extras, kind.name
        error = require_extra(kind, "watching it")
        assert isinstance(error, TargetError)
        assert str(error) == (f"watching it needs the [{kind.extra}] extra: "
                              f"pip install 'babysit[{kind.extra}]'")


def test_import_linter_keeps_every_kind_package_apart():
    contracts = _pyproject()["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c.get("containers") == ["babysit.targets"])
    kind_layer = {name.strip() for name in layers[1].split("|")}
    packages = {kind.open.__module__.removeprefix("babysit.targets.") for kind in KINDS}
    assert kind_layer == packages


def test_the_table_of_kinds_imports_no_client_library():
    code = ("import sys; import babysit.targets.registry; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('paramiko', 'mlflow', 'wandb', 'kubernetes', 'tensorboard', 'psutil', 'torch') "
            "or m.startswith(('google.cloud.aiplatform', 'google.protobuf'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"
