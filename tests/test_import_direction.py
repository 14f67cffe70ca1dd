"""Imports between the apps go one way, and models import no services (docs/architecture.md).

The allowed arrows: surveys imports none of the other apps; llm_collect and analysis import only
surveys; llm_judging, the top app, may import surveys, llm_collect and analysis. Any app may import
moraljudge (the project: settings, the Celery app, database routing). Every application module is
parsed, and imports inside functions count as much as those at the top: an import moved into a
function to dodge a cycle is still an arrow.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APPS = ("surveys", "llm_collect", "analysis", "llm_judging")
PROJECT = "moraljudge"
MAY_IMPORT = {
    "surveys": {PROJECT},
    "llm_collect": {"surveys", PROJECT},
    "analysis": {"surveys", PROJECT},
    "llm_judging": {"surveys", "llm_collect", "analysis", PROJECT},
}


def application_modules() -> list[Path]:
    return sorted(path for app in APPS for path in (ROOT / app).rglob("*.py") if "migrations" not in path.parts)


def dotted(path: Path) -> list[str]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def imported_modules(path: Path) -> list[str]:
    """Every module `path` imports, made absolute; `from x import y, z` is x.y and x.z (y may be a module)."""
    package = dotted(path) if path.name == "__init__.py" else dotted(path)[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found += [f"{module}.{alias.name}" for alias in node.names]
    return found


def is_model_module(path: Path) -> bool:
    relative = path.relative_to(ROOT)
    return relative.name == "models.py" or "models" in relative.parts[:-1]


def violations() -> list[str]:
    found = []
    for path in application_modules():
        app, name = path.relative_to(ROOT).parts[0], path.relative_to(ROOT).as_posix()
        for module in imported_modules(path):
            top = module.split(".")[0]
            if top in (*APPS, PROJECT) and top != app and top not in MAY_IMPORT[app]:
                found.append(f"{name} imports {module}: {app} may import only {sorted(MAY_IMPORT[app])}")
            if is_model_module(path) and "services" in module.split("."):
                found.append(f"{name} imports {module}: models import no services")
    return sorted(set(found))


def test_apps_import_only_the_apps_below_them_and_models_no_services():
    assert violations() == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from llm_judging.services.planning import x", "llm_judging.services.planning.x"),
        ("def f():\n    from llm_judging import services", "llm_judging.services"),
        ("import llm_judging.views", "llm_judging.views"),
    ],
)
def test_an_upward_import_is_found_at_the_top_or_inside_a_function(tmp_path, monkeypatch, source, expected):
    app = tmp_path / "analysis"
    app.mkdir()
    (app / "views.py").write_text(source)
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert any(expected in problem and "analysis may import only" in problem for problem in violations())


def test_a_model_module_importing_a_service_relatively_is_found(tmp_path, monkeypatch):
    models = tmp_path / "surveys" / "models"
    models.mkdir(parents=True)
    (models / "study.py").write_text("def f():\n    from ..services.judging import x\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert violations() == ["surveys/models/study.py imports surveys.services.judging.x: models import no services"]


def imports_inside_functions(path: Path) -> list[str]:
    """`function: module` for every import statement inside a function of `path`."""
    found = []
    for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                    found.append(f"{function.name}: {'.' * getattr(node, 'level', 0)}{module or ''}")
    return found


def test_analysis_imports_inside_a_function_only_to_send_its_own_task():
    # The one exception: tasks.py calls the services, so the service that sends a refit reaches its task lazily.
    found = {
        path.relative_to(ROOT).as_posix(): imports_inside_functions(path)
        for path in (ROOT / "analysis").rglob("*.py")
        if "migrations" not in path.parts and imports_inside_functions(path)
    }
    assert found == {"analysis/services/refits.py": ["_send_refit: .."]}
