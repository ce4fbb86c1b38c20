"""facerec's public Python API is small and the interfaces stay behind it (issue #49, item 1).

The API is `facerec.Gallery`: at most 15 verbs, no public attributes (counted on the class and on an opened
gallery). The modules outside `facerec/gallery/` import from `facerec.gallery` only the Gallery, the composition
root's service types, what the verbs return, and the few constants listed below with why: checked on their
imports (`ast`, imports inside functions included), not by searching their text. None of them touches a private
attribute of a Gallery (`_parts`). Importing `facerec` stays cheap: the Gallery loads on first use."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from facerec.gallery import Gallery
from facerec.gallery.interface_services import Services
from facerec.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "facerec"
MAX_VERBS = 16
VERBS = {"open", "close", "enroll", "add_photo", "identify", "identify_video", "verify", "people", "rename",
         "delete", "merge", "move_face", "export", "import_", "health", "services"}

# What a module outside facerec/gallery may import from it.
SERVICE_TYPES = {  # the narrow services (`Services`' fields) and the records and constants they hand out
    "facerec.gallery.interface_services": {"Services", "Thresholds", "PersonTemplates", "NegativeExamples", "People",
                                           "SuggestedPeople", "UnknownFaces", "Videos"},
    "facerec.gallery.photos": {"Photos"},
    "facerec.gallery.feedback": {"SightingsFeedback"},
    "facerec.gallery.templates": {"Template"},
    "facerec.gallery.suggestions": {"PAGE", "MAX_PAGE", "SHOWN_FACES"},  # its page sizes
    "facerec.gallery.maintenance": {"Maintenance"},
    "facerec.gallery.library_groups": {"LibraryGroups", "LibraryGrouping"},  # a library's faces grouped (#66)
    # and the bounds of an anonymous caller and the containers read, which the interfaces state
    "facerec.gallery.video": {"VideoAnswer", "LiveFaces", "ANONYMOUS_LIMITS", "CONTAINERS"},
}
PUBLIC = {
    "facerec.gallery": {"Gallery"},
    **SERVICE_TYPES,
    "facerec.gallery.results": {"EnrollResult", "IdentityInfo", "FaceMatch", "VerifyResult", "Candidate"},
    "facerec.gallery.regroup": {"Regroup", "Regrouped"},  # what `Gallery.merge` and `move_face` return
    "facerec.gallery.health": {"HealthReport"},  # what `Gallery.health` returns
}
# Two modules may import a little more, each for a reason of its own:
MORE = {
    # words phrases Health's figures with the constants they were computed with
    "facerec/words/health.py": {"facerec.gallery.health.sightings": {"DRIFT", "MIN_BLOCK"},
                                "facerec.gallery.health.distances": {"similarity_to_distance"}},
    # the evaluation harness measures the parts themselves (the embedder, the scorer, the stored embeddings)
    "facerec/evaluation/oneshot.py": {"facerec.gallery.composition": {"parts_of"}},
    "facerec/evaluation/existing.py": {"facerec.gallery.composition": {"parts_of"}},
}


def outside_the_gallery() -> list[Path]:
    return [path for path in sorted(PACKAGE.rglob("*.py"))
            if path.relative_to(PACKAGE).parts[0] != "gallery"] + [ROOT / "app.py"]


def gallery_imports(tree: ast.AST) -> list[tuple[str, str]]:
    """(module, name) for every import of facerec.gallery or below in `tree`, anywhere in it."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "facerec" and any(a.name == "gallery" for a in node.names):
                found.append(("facerec", "gallery"))  # the package as an object: all of it
            elif node.module == "facerec.gallery" or node.module.startswith("facerec.gallery."):
                found.extend((node.module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((alias.name, "*") for alias in node.names if alias.name.startswith("facerec.gallery"))
    return found


def private_reaches(tree: ast.AST) -> list[int]:
    """Lines where `tree` reads a Gallery's private parts (`x._parts`)."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "_parts"]


def test_modules_outside_the_gallery_import_only_its_public_names() -> None:
    wrong = []
    for path in outside_the_gallery():
        relative = path.relative_to(ROOT).as_posix()
        more = MORE.get(relative, {})
        tree = ast.parse(path.read_text(), filename=relative)
        wrong += [f"{relative}: {module}.{name}" for module, name in gallery_imports(tree)
                  if name not in PUBLIC.get(module, set()) | more.get(module, set())]
        wrong += [f"{relative}:{line}: reads a Gallery's _parts" for line in private_reaches(tree)]
    assert wrong == []


def test_the_import_check_sees_a_part_imported_and_a_private_reach() -> None:
    """Negative controls: the check above fails on what it forbids, inside a function too."""
    tree = ast.parse("def f(g):\n    from facerec.gallery.search import Search\n    import facerec.gallery.people\n"
                     "    from facerec import gallery\n    return g._parts.store\n")
    imported = gallery_imports(tree)
    assert ("facerec.gallery.search", "Search") in imported and ("facerec.gallery.people", "*") in imported
    assert ("facerec", "gallery") in imported and private_reaches(tree) == [5]
    assert all(name not in PUBLIC.get(module, set()) for module, name in imported)


def test_the_service_types_listed_are_the_services_handed_out() -> None:
    fields = Services.__annotations__
    named = {name for names in SERVICE_TYPES.values() for name in names}
    assert {"Settings", "ApiKeys"} | named >= set(fields.values()), fields


def documented_services() -> dict[str, set[str]]:
    """docs/python.md's table of the services: each one's public names, as its second column lists them."""
    page = (ROOT / "docs" / "python.md").read_text()
    table = page.split("## Services, for interfaces")[1].split("\n\n")[2]
    found = {}
    for row in table.splitlines()[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        service = cells[0].strip("`")
        if service != "settings":
            found[service] = set(re.findall(r"`(\w+)`", cells[1]))
    return found


def test_each_service_has_exactly_the_names_the_docs_list(tmp_path) -> None:
    """#65 item 1: `services()` was a side door of 59 methods and 38 attributes (stores, indexes, pipelines,
    `settle` and `close`); each service now shows exactly what docs/python.md promises."""
    documented = documented_services()
    with Gallery(Settings.from_env(home=tmp_path / "home")) as gallery:
        services = gallery.services()
        handed_out = {name: public_names(getattr(services, name)) for name in Services.__annotations__
                      if name != "settings"}
    assert handed_out == documented
    assert sum(len(names) for names in handed_out.values()) == 53  # 51, #66's library.group, #67's video.camera


def public_names(thing: object) -> set[str]:
    return {name for name in dir(thing) if not name.startswith("_")}


def test_the_public_api_is_a_handful_of_verbs_and_no_attributes(tmp_path, portrait) -> None:
    on_the_class = public_names(Gallery)
    assert on_the_class == VERBS and len(on_the_class) <= MAX_VERBS
    assert all(callable(getattr(Gallery, name)) for name in on_the_class)  # no property, no constant
    with Gallery(Settings.from_env(home=tmp_path / "home")) as gallery:
        assert public_names(gallery) == VERBS  # no attribute set on the instance either
        assert vars(gallery).keys() == {"_parts"}
        gallery.enroll(portrait("Barack_Obama", 1), "Barack Obama")
        assert [p.name for p in gallery.people()] == ["Barack Obama"]


def test_importing_facerec_is_cheap_and_the_gallery_comes_on_first_use() -> None:
    code = ("import sys, facerec; heavy = [m for m in ('numpy', 'onnxruntime', 'sqlalchemy', 'facerec.gallery') "
            "if m in sys.modules]; assert heavy == [], heavy; from facerec import Gallery; "
            "assert Gallery.__module__ == 'facerec.gallery'; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.stdout.strip() == "ok", done.stderr
