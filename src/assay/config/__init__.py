"""Suite and project configuration: models, YAML loading with located errors, JSON Schema.

Names are imported on first use (PEP 562): the suite models pull in every grader and target,
and commands that only read stored runs need none of them (`project_store`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_getattr

if TYPE_CHECKING:
    from assay.config._checks import case_graders
    from assay.config._execution import SuiteExecution, TestExecution, VerdictBands
    from assay.config._load import (
        SUITE_SUFFIXES,
        LoadedProject,
        LoadedSuite,
        discover_suite_files,
        load_project,
        load_suite,
        parse_suite,
    )
    from assay.config._project_store import PROJECT_FILE, find_project, project_store
    from assay.config._regression import BaselineChoice, RegressionConfig
    from assay.config._schema import suite_json_schema, suite_json_schema_text
    from assay.config._studio import (
        STUDIO_CONFIG_FILE,
        StudioConfig,
        load_studio_config,
        save_studio_config,
        studio_config_path,
    )
    from assay.config._suite import (
        ExpectedToolCall,
        InputMessage,
        ProjectConfig,
        Simulate,
        Suite,
        SuiteTests,
        TestCase,
    )
    from assay.config._workspace import Workspace, WorkspaceHook, WorkspaceHooks, WorkspaceRepo
    from assay.config._yaml import SourceMap, format_path, interpolate_env, load_yaml

_MODULES = {
    "assay.config._checks": ["case_graders"],
    "assay.config._execution": ["SuiteExecution", "TestExecution", "VerdictBands"],
    "assay.config._load": [
        "SUITE_SUFFIXES",
        "LoadedProject",
        "LoadedSuite",
        "discover_suite_files",
        "load_project",
        "load_suite",
        "parse_suite",
    ],
    "assay.config._project_store": ["PROJECT_FILE", "find_project", "project_store"],
    "assay.config._regression": ["BaselineChoice", "RegressionConfig"],
    "assay.config._schema": ["suite_json_schema", "suite_json_schema_text"],
    "assay.config._studio": [
        "STUDIO_CONFIG_FILE",
        "StudioConfig",
        "load_studio_config",
        "save_studio_config",
        "studio_config_path",
    ],
    "assay.config._suite": [
        "ExpectedToolCall",
        "InputMessage",
        "ProjectConfig",
        "RegressionConfig",
        "Simulate",
        "Suite",
        "SuiteTests",
        "TestCase",
    ],
    "assay.config._workspace": ["Workspace", "WorkspaceHook", "WorkspaceHooks", "WorkspaceRepo"],
    "assay.config._yaml": ["SourceMap", "format_path", "interpolate_env", "load_yaml"],
}

__all__ = [
    "PROJECT_FILE",
    "STUDIO_CONFIG_FILE",
    "SUITE_SUFFIXES",
    "BaselineChoice",
    "ExpectedToolCall",
    "InputMessage",
    "LoadedProject",
    "LoadedSuite",
    "ProjectConfig",
    "RegressionConfig",
    "Simulate",
    "SourceMap",
    "StudioConfig",
    "Suite",
    "SuiteExecution",
    "SuiteTests",
    "TestCase",
    "TestExecution",
    "VerdictBands",
    "Workspace",
    "WorkspaceHook",
    "WorkspaceHooks",
    "WorkspaceRepo",
    "case_graders",
    "discover_suite_files",
    "find_project",
    "format_path",
    "interpolate_env",
    "load_project",
    "load_studio_config",
    "load_suite",
    "load_yaml",
    "parse_suite",
    "project_store",
    "save_studio_config",
    "studio_config_path",
    "suite_json_schema",
    "suite_json_schema_text",
]


__getattr__ = lazy_getattr(__name__, _MODULES, globals())
