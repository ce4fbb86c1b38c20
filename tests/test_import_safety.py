"""Importing a gallery file never corrupts a gallery: every malformed, hostile or oversized export (wrong-sized or
non-unit embeddings, zip bombs, crops that are not 112x112 images, names that enrollment would refuse,
malformed manifests) is refused in one line, and the gallery folder is byte for byte as it was. Real LFW faces,
the shipped model, real SQLite and FAISS files."""

from __future__ import annotations

import io
import shutil
import time
import tracemalloc

import numpy as np
import pytest
from hardening import (  # noqa: F401 - pytest finds the shared fixtures by name in this module
    HOPPER,
    OBAMA,
    add_record,
    assert_cli_refused,
    assert_one_line,
    base,
    display,
    export,
    facerec_cli,
    home,
    jpeg_bytes,
    open_gallery,
    pipeline,
    refused_import,
    rewrite_export,
    unchanged,
)
from PIL import Image

from facerec.errors import InvalidArgument
from facerec.formats.archive import ImportLimits
from facerec.gallery.composition import parts_of


def test_import_with_a_10_float_embedding_writes_nothing(unchanged, pipeline, export, tmp_path, portrait):
    manifest, _vectors = add_record("Mallory", np.zeros(512))
    bad = rewrite_export(export, tmp_path / "short.zip", lambda d: {**d, "faces": manifest(d)["faces"][-1:]},
                         lambda v: np.ones((1, 10), np.float32) / np.sqrt(10))
    refused_import(unchanged, pipeline, bad, "record 1 ('Mallory')", "512 numbers")
    with open_gallery(unchanged, pipeline) as gallery:  # identify, delete, export still work
        (match,) = gallery.identify(portrait(OBAMA, 2), remember=False)  # a sighting would change the folder
        assert match.name == display(OBAMA)


def test_imported_vectors_must_be_finite_unit_vectors(unchanged, pipeline, export, tmp_path, portrait):
    with open_gallery(unchanged, pipeline) as gallery:
        target = parts_of(gallery).store.faces.embeddings()[1][0]
    for label, vector, word in (("long", target * 1000, "length 1000"), ("nan", np.full(512, np.nan), "finite"),
                                ("zero", np.zeros(512), "length 0")):
        manifest, vectors = add_record("Mallory", vector)
        message = refused_import(unchanged, pipeline, rewrite_export(export, tmp_path / f"{label}.zip", manifest,
                                                                     vectors), word)
        assert "record 4 ('Mallory')" in message
    with open_gallery(unchanged, pipeline) as gallery:  # the bulk API refuses NaN, and stores unit vectors only
        with pytest.raises(InvalidArgument, match="not finite"):
            parts_of(gallery).enrollment.add_embeddings([{"name": "Mallory", "embedding": np.full(512, np.nan)}])
    shutil.copytree(unchanged, tmp_path / "bulk")
    with open_gallery(tmp_path / "bulk", pipeline) as gallery:
        parts_of(gallery).enrollment.add_embeddings([{"name": "Mallory", "embedding": target * 1000}])
        assert np.linalg.norm(parts_of(gallery).store.faces.embeddings()[1][-1]) == pytest.approx(1, abs=1e-6)
        (match,) = gallery.identify(portrait("Joe_Biden", 1))
        assert match.name == "Joe Biden" and match.similarity < 1.01  # no Mallory at similarity 291


@pytest.mark.parametrize("bomb", ["manifest", "crop", "vectors", "many_crops"])
def test_zip_bombs_are_refused_within_bounded_memory(unchanged, pipeline, export, tmp_path, bomb):
    if bomb == "manifest":  # 256 MiB of spaces: valid JSON whitespace, ~250 KB compressed
        archive = rewrite_export(export, tmp_path / "b.zip", extra={"gallery.json": (256 << 20, b" ")})
        words = ("gallery.json", "over the limit")
    elif bomb == "crop":
        manifest, vectors = add_record("Bomb", np.eye(512)[0], crop="crops/bomb.jpg")
        archive = rewrite_export(export, tmp_path / "b.zip", manifest, vectors,
                                 extra={"crops/bomb.jpg": (256 << 20, b"\0")})
        words = ("crops/bomb.jpg", "over the limit")
    elif bomb == "vectors":  # a header promising 10^8 x 512 float64 (400 GB) behind a few bytes
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                      "shape": (100_000_000, 512)})
        archive = rewrite_export(export, tmp_path / "b.zip",
                                 extra={"embeddings.npy": header.getvalue() + b"\0" * 64})
        words = ("embeddings.npy", "3 faces", "100000000 vectors")
    else:  # 400 valid 112x112 JPEG crops, each padded to 250 KB with zeros: 100 MB from a ~1 MB file
        crop = jpeg_bytes(np.full((112, 112, 3), 90, np.uint8))
        padded = crop + b"\0" * (250_000 - len(crop))

        def manifest(data):
            template = data["faces"][0]
            data["faces"] = [{**template, "name": f"Person {i}", "photo_sha256": f"{i:064d}", "crop": f"crops/{i}.jpg"}
                             for i in range(400)]
            return data

        archive = rewrite_export(export, tmp_path / "b.zip", manifest, lambda v: np.repeat(v[:1], 400, axis=0),
                                 extra={f"crops/{i}.jpg": padded for i in range(400)})
        words = ("expands to more data",)
    assert archive.stat().st_size < 3 << 20
    tracemalloc.start()
    try:
        refused_import(unchanged, pipeline, archive, *words)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 80 << 20, f"import held {peak >> 20} MiB"


def test_limits_are_stated_and_enforced(unchanged, pipeline, export):
    with open_gallery(unchanged, pipeline) as gallery:
        for limits, words in ((ImportLimits(max_faces=2), "holds 3 faces, over the limit of 2"),
                              (ImportLimits(max_file_bytes=1000), "over the limit of 1,000"),
                              (ImportLimits(max_crop_bytes=100), "bytes uncompressed, over the limit of 100.")):
            with pytest.raises(InvalidArgument) as caught:
                gallery.import_(export, limits)
            message = assert_one_line(caught.value)
            assert words in message and message.endswith("Nothing was imported."), message


def test_imported_crops_must_be_112px_images_and_are_stored_as_jpeg(unchanged, pipeline, export, tmp_path,
                                                                      portrait):
    huge = io.BytesIO()
    Image.new("1", (12000, 12000)).save(huge, "PNG")  # ~20 KB file, 144 megapixels
    noisy_jpeg = jpeg_bytes(np.random.default_rng(5).integers(0, 256, (112, 112, 3), dtype=np.uint8))
    for label, data, word in (("text", b"this is not a picture", "not an image"),
                              ("huge", huge.getvalue(), "12000x12000"),
                              ("truncated", noisy_jpeg[: len(noisy_jpeg) // 2], "cannot be decoded")):
        manifest, vectors = add_record(f"Crop {label}", np.eye(512)[1], crop=f"crops/{label}.png")
        start = time.perf_counter()
        refused_import(unchanged, pipeline, rewrite_export(export, tmp_path / f"{label}.zip", manifest, vectors,
                                                           extra={f"crops/{label}.png": data}), word)
        assert time.perf_counter() - start < 30

    # A PNG crop of the right size is accepted, stored re-encoded as JPEG, and the list and health still work.
    photo = pipeline.read(portrait(HOPPER, 1))
    crop = pipeline.embed(photo, pipeline.detect(photo))[0][0]
    png = io.BytesIO()
    Image.fromarray(crop).save(png, "PNG")
    manifest, vectors = add_record("Png Crop", np.eye(512)[2], crop="crops/png.png")
    accepted = rewrite_export(export, tmp_path / "png.zip", manifest, vectors, extra={"crops/png.png": png.getvalue()})
    copy = tmp_path / "copy"
    shutil.copytree(unchanged, copy)
    with open_gallery(copy, pipeline) as gallery:
        assert gallery.import_(accepted) == {"added": 1, "skipped": 3}
        info = gallery.services().directory.get("Png Crop")
        stored = gallery.services().directory.face_crop(info.face_ids[0])
        assert stored[:3] == b"\xff\xd8\xff" and Image.open(io.BytesIO(stored)).size == (112, 112)
        assert len(gallery.people()) == 4
        gallery.health()


@pytest.mark.parametrize("name, word", [("", "name is required"), ("   ", "name is required"),
                                        (None, "name is required"), (5, "must be text"),
                                        ("x" * 5000, "200 characters"), ("eileen collins", "letter case"),
                                        ("Eve\u200bBob", "U+200B"), ("Eve\u202eboB", "U+202E"),
                                        ("Eve\x1b[2J", "U+001B")])
def test_imported_names_are_cleaned_like_enrolled_ones(unchanged, pipeline, export, tmp_path, name, word):
    manifest, vectors = add_record("placeholder", np.eye(512)[3])

    def renamed(data):
        data = manifest(data)
        data["faces"][-1]["name"] = name
        return data

    refused_import(unchanged, pipeline, rewrite_export(export, tmp_path / "n.zip", renamed, vectors), word)


def test_padded_and_case_duplicate_names_in_one_file(unchanged, pipeline, export, tmp_path):
    first, first_vectors = add_record("AJ COOK ", np.eye(512)[4])
    second, second_vectors = add_record("AJ Cook", np.eye(512)[5])
    both = rewrite_export(export, tmp_path / "aj.zip", lambda d: second(first(d)),
                          lambda v: second_vectors(first_vectors(v)))
    refused_import(unchanged, pipeline, both, "'AJ COOK' and 'AJ Cook'", "letter case")

    padded, padded_vectors = add_record("  Padded   Name  ", np.eye(512)[6])
    copy = tmp_path / "copy"
    shutil.copytree(unchanged, copy)
    with open_gallery(copy, pipeline) as gallery:
        gallery.import_(rewrite_export(export, tmp_path / "padded.zip", padded, padded_vectors))
        assert "Padded Name" in [p.name for p in gallery.people()]
        assert gallery.rename("Padded Name", "Renamed").name == "Renamed"
        assert gallery.delete("Renamed").photos == 1


@pytest.mark.parametrize("case", ["list", "faces_number", "missing_keys", "null_name", "more_records",
                                  "no_vectors", "bad_box", "not_json", "wrong_format", "bad_date", "future_date",
                                  "missing_crop"])
def test_malformed_manifests_are_refused_in_one_line(unchanged, pipeline, export, tmp_path, case):
    vectors = None
    drop: tuple = ()
    extra = {}
    if case == "list":
        manifest, word = (lambda d: d["faces"]), "must hold an object"
    elif case == "faces_number":
        manifest, word = (lambda d: {**d, "faces": 5}), "must be a list"
    elif case == "missing_keys":
        manifest, word = (lambda d: {**d, "faces": [{"name": "X"}, *d["faces"][1:]]}), "lacks model_id"
    elif case == "null_name":
        manifest, word = (lambda d: {**d, "faces": [{**d["faces"][0], "name": None}, *d["faces"][1:]]}), "record 1"
    elif case == "more_records":
        manifest, word = None, "lists 3 faces but embeddings.npy holds 1"
        vectors = lambda v: v[:1]  # noqa: E731
    elif case == "no_vectors":
        manifest, word, drop = None, "embeddings.npy is missing", ("embeddings.npy",)
    elif case == "bad_box":
        manifest, word = (lambda d: {**d, "faces": [{**d["faces"][0], "box": ["a", 1]}, *d["faces"][1:]]}), "box"
    elif case == "not_json":
        manifest, word, extra = None, "not valid JSON", {"gallery.json": b"{not json"}
    elif case == "wrong_format":
        manifest, word = (lambda d: {**d, "format": "something-else"}), "format"
    elif case == "bad_date":
        manifest, word = (lambda d: {**d, "faces": [{**d["faces"][0], "enrolled_at": "yesterday"},
                                                    *d["faces"][1:]]}), "enrolled_at must be a past date"
    elif case == "future_date":
        manifest, word = (lambda d: {**d, "faces": [{**d["faces"][0], "added_at": "2999-01-01T00:00:00+00:00"},
                                                    *d["faces"][1:]]}), "added_at must be a past date"
    else:
        manifest, word = (lambda d: {**d, "faces": [{**d["faces"][0], "crop": "crops/none.jpg"},
                                                    *d["faces"][1:]]}), "not in the file"
    archive = rewrite_export(export, tmp_path / f"{case}.zip", manifest, vectors, extra=extra, drop=drop)
    refused_import(unchanged, pipeline, archive, word)
    if case in ("list", "more_records"):  # the CLI says the same in one line
        assert_cli_refused(facerec_cli("import", str(archive), home=unchanged), word)
