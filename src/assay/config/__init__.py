"""Suite and project configuration: models, YAML loading with located errors, JSON Schema."""

from assay.config._checks import case_graders
from assay.config._execution import SuiteExecution, TestExecution, VerdictBands
from assay.config._load import (
    PROJECT_FILE,
    SUITE_SUFFIXES,
    LoadedProject,
    LoadedSuite,
    discover_suite_files,
    find_project,
    load_project,
    load_suite,
    parse_suite,
)
from assay.config._schema import suite_json_schema, suite_json_schema_text
from assay.config._suite import ExpectedToolCall, InputMessage, ProjectConfig, Suite, TestCase
from assay.config._yaml import SourceMap, format_path, interpolate_env, load_yaml

__all__ = [
    "PROJECT_FILE",
    "SUITE_SUFFIXES",
    "ExpectedToolCall",
    "InputMessage",
    "LoadedProject",
    "LoadedSuite",
    "ProjectConfig",
    "SourceMap",
    "Suite",
    "SuiteExecution",
    "TestCase",
    "TestExecution",
    "VerdictBands",
    "case_graders",
    "discover_suite_files",
    "find_project",
    "format_path",
    "interpolate_env",
    "load_project",
    "load_suite",
    "load_yaml",
    "parse_suite",
    "suite_json_schema",
    "suite_json_schema_text",
]
