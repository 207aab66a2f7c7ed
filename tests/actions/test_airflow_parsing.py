"""Airflow hooks in action files: lakeFS's properties read, bad ones refused by file and line."""

from __future__ import annotations

import pytest

from kvlake.actions import ActionFileError, parse_action

_HEAD = "name: ab\non:\n  post-commit:\nhooks:\n  - id: dag\n    type: airflow\n    properties:\n"
_REQUIRED = (
    "      url: http://airflow.example.com:8080\n"
    "      dag_id: example_dag\n"
    "      username: admin\n"
    "      password: '{{ ENV.LAKEFSACTION_AIRFLOW_SECRET }}'\n"
)


def test_lakefs_s_airflow_example_is_parsed() -> None:
    text = (
        _HEAD
        + _REQUIRED
        + (
            "      dag_conf:\n        some: additional_conf\n        n: [1, 2]\n"
            "      wait_for_dag: true\n      timeout: 2m\n"
        )
    )
    (hook,) = parse_action("_lakefs_actions/a.yaml", text.encode()).hooks
    assert hook.type == "airflow" and hook.airflow is not None and hook.webhook is None
    airflow = hook.airflow
    assert (airflow.url, airflow.dag_id, airflow.username) == (
        "http://airflow.example.com:8080",
        "example_dag",
        "admin",
    )
    assert airflow.password == "{{ ENV.LAKEFSACTION_AIRFLOW_SECRET }}"  # read when it runs
    assert airflow.dag_conf == (("some", "additional_conf"), ("n", [1, 2]))
    assert airflow.wait_for_dag is True and airflow.timeout == 120.0


def test_defaults() -> None:
    (hook,) = parse_action("_lakefs_actions/a.yaml", (_HEAD + _REQUIRED).encode()).hooks
    assert hook.airflow is not None
    assert (hook.airflow.wait_for_dag, hook.airflow.timeout, hook.airflow.dag_conf) == (
        False,
        60.0,
        (),
    )


@pytest.mark.parametrize(
    ("properties", "line", "problem"),
    [
        ("      url: http://a\n      dag_id: d\n      username: u\n", 8, "needs 'password'"),
        ("      dag_id: d\n      username: u\n      password: p\n", 8, "needs 'url'"),
        (
            "      url: ftp://a\n      dag_id: d\n      username: u\n      password: p\n",
            8,
            "airflow url 'ftp://a' is not http(s)",
        ),
        (_REQUIRED + "      wait_for_dag: sometimes\n", 12, "'wait_for_dag' must be true or false"),
        (_REQUIRED + "      dag_conf: [a]\n", 12, "'dag_conf' must be a mapping"),
        (_REQUIRED + "      timeout: soon\n", 12, "'timeout'"),
        (
            "      url: http://a\n      dag_id: d\n      username: u\n"
            "      password: '{{ ENV.KVLAKE_AUTH_ENCRYPT_SECRET_KEY }}'\n",
            11,
            "'KVLAKE_AUTH_ENCRYPT_SECRET_KEY' may not be read by an action",
        ),
    ],
)
def test_bad_airflow_properties_name_file_and_line(
    properties: str, line: int, problem: str
) -> None:
    with pytest.raises(ActionFileError) as refused:
        parse_action("_lakefs_actions/bad.yaml", (_HEAD + properties).encode())
    message = str(refused.value)
    assert message.startswith(f"action file '_lakefs_actions/bad.yaml' line {line}: "), message
    assert problem in message
