"""Detection (facerec.faces.detect), alignment (facerec.faces.align) and face choice (facerec.faces.choice) on real
photos: the shipped public-domain portraits (tests/faces) framed as LFW frames a face, so these run on any clone; a
photo with a bystander (LFW) and the celeba112 crops need the research datasets. The RetinaFace ONNX session is
created once for the module; composite photos are built in tmp_path.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from facerec.faces.align import (
    ALIGNED_SIZE,
    ARCFACE_TEMPLATE,
    align_face,
    landmark_alignment_error,
    similarity_transform,
    warp_affine,
)
from facerec.faces.choice import central_face, largest_face, largest_face_index
from facerec.faces.detect import DetectedFace, FaceDetector
from facerec.faces.image import load_image

# Frontal photos of three different people, each with exactly one detected face: shipped portraits (the names are
# those of the LFW photos they replaced, so that the tests below read as before).
BUSH, POWELL, BLAIR = ("Barack_Obama", 1), ("Joe_Biden", 1), ("Eileen_Collins", 1)
# Where each is cut from its portrait to be framed as LFW frames a face (a square of 2.4 face widths around the
# face, moved inside the photo where it would cross an edge, then 250x250): the geometry below (face sizes,
# min_face_size, downscaling) was written for that framing.
LFW_FRAMING = {BUSH: (121, 0, 429, 308), POWELL: (160, 27, 593, 460), BLAIR: (112, 3, 340, 231)}


@pytest.fixture(scope="module")
def detector() -> FaceDetector:
    return FaceDetector()


@pytest.fixture(scope="module")
def photo(portrait):
    """photo((name, index)) -> that shipped portrait framed as LFW frames a face: a 250x250 RGB uint8 array."""

    def framed(key: tuple[str, int]) -> np.ndarray:
        with Image.open(portrait(*key)) as original:
            cut = original.convert("RGB").crop(LFW_FRAMING[key]).resize((250, 250), Image.Resampling.LANCZOS)
        return np.asarray(cut)

    return framed


@pytest.fixture(scope="module")
def bush(photo) -> np.ndarray:
    return photo(BUSH)


@pytest.fixture(scope="module")
def bush_face(detector, bush) -> DetectedFace:
    faces = detector.detect(bush)
    assert len(faces) == 1
    return faces[0]


def mean_distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(a, np.float64) - np.asarray(b, np.float64), axis=1).mean())


def apply(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    return np.asarray(points, np.float64) @ matrix[:, :2].T + matrix[:, 2]


def redetect_in_canvas(detector: FaceDetector, crop: np.ndarray, offset: int = 56) -> DetectedFace | None:
    """Detect again on a crop pasted into a black canvas twice its size (the crop alone is too tight a frame)."""
    size = crop.shape[0] + 2 * offset
    canvas = np.zeros((size, size, 3), np.uint8)
    canvas[offset : offset + crop.shape[0], offset : offset + crop.shape[1]] = crop
    return central_face(detector.detect(canvas), canvas.shape)


# ---------------------------------------------------------------------------------------------------------------
# Detection on real photos


def test_real_photo_yields_one_confident_face_with_subpixel_landmarks(bush, bush_face):
    face = bush_face
    assert isinstance(face.score, float) and 0.9 <= face.score <= 1.0
    x1, y1, x2, y2 = face.box
    assert 0 <= x1 < x2 <= 250 and 0 <= y1 < y2 <= 250
    assert 60 < face.width < 160 and 60 < face.height < 200  # an LFW face, not the whole frame
    landmarks = face.landmarks
    assert landmarks.shape == (5, 2) and landmarks.dtype == np.float32
    assert np.any(np.abs(landmarks - np.round(landmarks)) > 1e-3), "landmarks were rounded to whole pixels"
    assert np.all((landmarks[:, 0] > x1) & (landmarks[:, 0] < x2) & (landmarks[:, 1] > y1) & (landmarks[:, 1] < y2))
    left_eye, right_eye, nose, left_mouth, right_mouth = landmarks
    assert left_eye[0] < right_eye[0] and left_mouth[0] < right_mouth[0]  # "left" as seen in the image
    assert max(left_eye[1], right_eye[1]) < nose[1] < min(left_mouth[1], right_mouth[1])


def test_detected_face_properties(bush_face):
    face = bush_face
    x1, y1, x2, y2 = face.box
    assert face.width == pytest.approx(x2 - x1) and face.height == pytest.approx(y2 - y1)
    assert face.area == pytest.approx(face.width * face.height)
    assert face.center == pytest.approx(((x1 + x2) / 2, (y1 + y2) / 2))
    as_dict = face.to_dict()
    assert as_dict["box"] == pytest.approx(list(face.box), abs=0.01)
    assert as_dict["score"] == pytest.approx(face.score, abs=1e-4)
    assert np.allclose(as_dict["landmarks"], face.landmarks, atol=1e-3)


def test_detection_is_deterministic(detector, bush, bush_face):
    again = detector.detect(bush)
    assert len(again) == 1
    assert np.array_equal(again[0].landmarks, bush_face.landmarks) and again[0].box == bush_face.box


def test_grayscale_photo_still_yields_the_face(tmp_path, detector, bush, bush_face):
    path = tmp_path / "gray.png"
    Image.fromarray(bush).convert("L").save(path)
    image = load_image(path)
    assert np.array_equal(image[:, :, 0], image[:, :, 2])  # really gray
    faces = detector.detect(image)
    assert len(faces) == 1 and faces[0].score >= 0.9
    assert mean_distance(faces[0].landmarks, bush_face.landmarks) < 3


def test_exif_rotated_photo_loaded_upright_still_yields_the_face(tmp_path, detector, bush, bush_face):
    # Stored sideways (the camera's raw pixels) with EXIF Orientation 6: load_image must turn it upright.
    stored = np.ascontiguousarray(np.rot90(bush, 1))
    exif = Image.Exif()
    exif[0x0112] = 6
    path = tmp_path / "sideways.jpg"
    Image.fromarray(stored).save(path, exif=exif, quality=95)
    image = load_image(path)
    assert image.shape == bush.shape
    faces = detector.detect(image)
    assert len(faces) == 1 and faces[0].score >= 0.9
    assert mean_distance(faces[0].landmarks, bush_face.landmarks) < 3
    # eyes level (upright), as in the original
    left_eye, right_eye = faces[0].landmarks[:2]
    assert abs(right_eye[1] - left_eye[1]) < 0.3 * abs(right_eye[0] - left_eye[0])


def test_blank_images_have_no_faces(detector):
    assert detector.detect(np.full((480, 640, 3), 128, np.uint8)) == []
    assert detector.detect(np.zeros((224, 224, 3), np.uint8)) == []
    assert detector.detect(np.full((10, 12, 3), 200, np.uint8)) == []  # smaller than the network's stride


def test_three_photos_side_by_side_give_three_faces_left_to_right(tmp_path, detector, photo):
    left, middle, right = photo(BUSH), photo(POWELL), photo(BLAIR)
    # The right photo is enlarged 1.5x, so its face is the largest one; the canvas is 375 high, 875 wide.
    right = np.asarray(Image.fromarray(right).resize((375, 375), Image.BICUBIC))
    canvas = Image.new("RGB", (875, 375), (90, 90, 90))
    canvas.paste(Image.fromarray(left), (0, 62))
    canvas.paste(Image.fromarray(middle), (250, 62))
    canvas.paste(Image.fromarray(right), (500, 0))
    path = tmp_path / "three_people.png"
    canvas.save(path)
    image = load_image(path)

    faces = detector.detect(image)
    assert len(faces) == 3
    assert all(face.score >= 0.9 for face in faces)
    xs = [face.center[0] for face in faces]
    assert xs == sorted(xs)
    assert 0 < xs[0] < 250 and 250 < xs[1] < 500 and 500 < xs[2] < 875

    # Each face matches the detection on its own photo, shifted by where it was pasted.
    for face, (source, offset) in zip(faces[:2], ((left, (0, 62)), (middle, (250, 62)))):
        alone = detector.detect(source)
        assert len(alone) == 1
        assert mean_distance(face.landmarks, alone[0].landmarks + np.array(offset)) < 2

    assert central_face(faces, image.shape) is faces[1]
    assert largest_face(faces) is faces[2]
    assert largest_face_index(faces) == 2


def test_choice_helpers_on_no_faces():
    assert central_face([], (100, 100, 3)) is None
    assert largest_face([]) is None
    assert largest_face_index([]) is None


def test_central_face_uses_x_and_y_correctly():
    # Image 100 high and 400 wide: its centre is (x=200, y=50). A face at (200, 90) is nearer than one at (240, 50)
    # only if x is compared with the width and y with the height.
    def face_at(x: float, y: float, size: float = 10.0) -> DetectedFace:
        return DetectedFace((x - size, y - size, x + size, y + size), 0.99, np.zeros((5, 2), np.float32))

    near, far = face_at(205, 50), face_at(200, 95)
    assert central_face([far, near], (100, 400, 3)) is near
    big, small = face_at(10, 10, 30), face_at(200, 50, 5)
    assert largest_face([small, big]) is big and largest_face_index([small, big]) == 1


def test_real_photo_with_a_bystander_central_face_is_the_labelled_person(detector, lfw_photo):
    image = load_image(lfw_photo("Angelina_Jolie", 2))  # a real bystander: none of the portraits has one
    faces = detector.detect(image)
    assert len(faces) == 2
    chosen = central_face(faces, image.shape)
    other = next(face for face in faces if face is not chosen)
    assert math.dist(chosen.center, (125, 125)) < 15
    assert math.dist(other.center, (125, 125)) > 50


# ---------------------------------------------------------------------------------------------------------------
# Large photos: detection on a downscaled copy, coordinates mapped back to full resolution


def test_large_photo_is_detected_downscaled_and_mapped_back(detector, bush, bush_face):
    assert detector.max_side == 1280
    # 3000 x 2000 canvas; the photo enlarged 4x (1000 x 1000) at x=1500, y=600.
    canvas = np.full((2000, 3000, 3), 128, np.uint8)
    canvas[600:1600, 1500:2500] = np.asarray(Image.fromarray(bush).resize((1000, 1000), Image.BICUBIC))
    faces = detector.detect(canvas)
    assert len(faces) == 1 and faces[0].score >= 0.9
    face = faces[0]

    # Against the same photo detected at the detector's working size, scaled up by 3000/1280: the mapping alone.
    factor = 3000 / 1280
    small = np.asarray(Image.fromarray(canvas).resize((1280, round(2000 / factor)), Image.BILINEAR))
    reference = detector.detect(small)
    assert len(reference) == 1
    assert np.abs(face.landmarks - reference[0].landmarks * factor).max() < 2.0
    assert np.allclose(face.box, np.array(reference[0].box) * factor, atol=2.5)

    # Against the original 250 x 250 detection, scaled 4x and shifted: within 3 original pixels (12 here).
    expected = bush_face.landmarks * 4 + np.array([1500, 600])
    assert mean_distance(face.landmarks, expected) < 12
    x1, y1, x2, y2 = face.box
    assert 1500 <= x1 < x2 <= 2500 and 600 <= y1 < y2 <= 1600

    # Alignment samples the full-resolution photo: the crop matches the crop of the original.
    crop_big = align_face(canvas, face.landmarks)
    crop_small = align_face(bush, bush_face.landmarks)
    assert np.abs(crop_big.astype(float) - crop_small).mean() < 20


def test_downscaling_and_min_face_size_work_in_full_resolution_pixels(bush, bush_face):
    # max_side=125 halves the photo for detection (face ~47 px there, ~94 px at full resolution).
    halved = FaceDetector(max_side=125, min_face_size=80).detect(bush)
    assert len(halved) == 1
    assert halved[0].width > 80
    assert mean_distance(halved[0].landmarks, bush_face.landmarks) < 4
    assert FaceDetector(min_face_size=120).detect(bush) == []


# ---------------------------------------------------------------------------------------------------------------
# Alignment


def test_align_face_puts_the_landmarks_on_the_template(detector, bush, bush_face):
    crop = align_face(bush, bush_face.landmarks)
    assert crop.shape == (ALIGNED_SIZE, ALIGNED_SIZE, 3) and crop.dtype == np.uint8
    assert crop.mean() > 40  # a face, not a black border

    matrix = similarity_transform(bush_face.landmarks, ARCFACE_TEMPLATE)
    warped = apply(matrix, bush_face.landmarks)
    assert mean_distance(warped, ARCFACE_TEMPLATE) < 4
    assert landmark_alignment_error(bush_face.landmarks) == pytest.approx(mean_distance(warped, ARCFACE_TEMPLATE))

    # The pixels moved with the points: detecting again on the crop finds the landmarks where the matrix put them.
    again = redetect_in_canvas(detector, crop)
    assert again is not None
    assert mean_distance(again.landmarks - 56, warped) < 3


def test_align_face_other_sizes_scale_the_template(bush, bush_face):
    crop = align_face(bush, bush_face.landmarks, size=224)
    assert crop.shape == (224, 224, 3) and crop.dtype == np.uint8
    small = align_face(bush, bush_face.landmarks)
    halved = np.asarray(Image.fromarray(crop).resize((112, 112), Image.BILINEAR))
    assert np.abs(halved.astype(float) - small).mean() < 8


def test_warp_affine_integer_translation_is_an_exact_crop_with_black_border(bush):
    # target = source - (10, 20): the crop's pixel (x, y) is the photo's pixel (x + 10, y + 20).
    crop = warp_affine(bush, np.array([[1.0, 0.0, -10.0], [0.0, 1.0, -20.0]]), size=112)
    assert np.array_equal(crop, bush[20:132, 10:122])
    # Shifted far right/down, most of the crop falls outside the photo and is black.
    outside = warp_affine(bush, np.array([[1.0, 0.0, -200.0], [0.0, 1.0, -200.0]]), size=112)
    assert np.array_equal(outside[:50, :50], bush[200:250, 200:250])
    assert np.all(outside[50:, :] == 0) and np.all(outside[:, 50:] == 0)


def test_warp_affine_half_pixel_shift_averages_neighbours(bush):
    crop = warp_affine(bush, np.array([[1.0, 0.0, -0.5], [0.0, 1.0, 0.0]]), size=64)
    expected = (bush[:64, 0:64].astype(float) + bush[:64, 1:65]) / 2
    assert np.abs(crop - expected).max() <= 0.5 + 1e-9


def test_similarity_transform_recovers_a_known_similarity():
    rng = np.random.default_rng(3)
    source = rng.uniform(0, 200, (5, 2))
    scale, angle, shift = 1.7, 0.6, np.array([12.0, -5.0])
    rotation = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    target = source @ (scale * rotation).T + shift
    matrix = similarity_transform(source, target)
    assert matrix.shape == (2, 3)
    assert np.allclose(matrix[:, :2], scale * rotation, atol=1e-9)
    assert np.allclose(matrix[:, 2], shift, atol=1e-8)
    assert np.allclose(apply(matrix, source), target, atol=1e-8)


def test_similarity_transform_maps_the_template_onto_itself_up_to_similarity():
    # Template shrunk, rotated by 90 degrees and moved: the fit must undo exactly that, so the error is zero.
    rotated = ARCFACE_TEMPLATE[:, ::-1] * np.array([-0.5, 0.5]) + np.array([300.0, 40.0])
    assert landmark_alignment_error(rotated) == pytest.approx(0.0, abs=1e-9)
    assert landmark_alignment_error(ARCFACE_TEMPLATE) == pytest.approx(0.0, abs=1e-9)


def test_similarity_transform_never_reflects():
    rng = np.random.default_rng(4)
    source = rng.uniform(0, 100, (5, 2))
    mirrored_target = source * np.array([-1.0, 1.0]) + np.array([150.0, 0.0])  # a pure reflection
    matrix = similarity_transform(source, mirrored_target)
    linear = matrix[:, :2]
    assert np.linalg.det(linear) > 0  # rotation and scale only
    assert linear[0, 0] == pytest.approx(linear[1, 1]) and linear[0, 1] == pytest.approx(-linear[1, 0])
    # Mirrored landmarks (left/right swapped in the image) still give a proper rotation.
    assert np.linalg.det(similarity_transform(ARCFACE_TEMPLATE * np.array([-1.0, 1.0]), ARCFACE_TEMPLATE)[:, :2]) > 0


def test_similarity_transform_is_the_least_squares_fit():
    rng = np.random.default_rng(5)
    source = rng.uniform(0, 100, (5, 2))
    target = source @ np.array([[0.9, -0.3], [0.3, 0.9]]).T + 7 + rng.normal(0, 2.0, (5, 2))
    matrix = similarity_transform(source, target)
    best = ((apply(matrix, source) - target) ** 2).sum()
    a, b = matrix[0, 0], matrix[1, 0]
    for da, db, dx, dy in [(1e-3, 0, 0, 0), (-1e-3, 0, 0, 0), (0, 1e-3, 0, 0), (0, -1e-3, 0, 0),
                           (0, 0, 0.05, 0), (0, 0, 0, -0.05)]:
        other = np.array([[a + da, -(b + db), matrix[0, 2] + dx], [b + db, a + da, matrix[1, 2] + dy]])
        assert ((apply(other, source) - target) ** 2).sum() > best


# ---------------------------------------------------------------------------------------------------------------
# celeba112 training crops agree with our template


def test_celeba112_crops_agree_with_the_arcface_template(detector, celeba112):
    identities = sorted(p for p in celeba112.iterdir() if p.is_dir())[:24]
    assert len(identities) == 24
    distances, offsets = [], []
    for folder in identities:
        crop_path: Path = sorted(folder.glob("*.jpg"))[0]
        crop = load_image(crop_path)
        assert crop.shape == (112, 112, 3)
        face = redetect_in_canvas(detector, crop)
        assert face is not None, f"no face in {crop_path}"
        landmarks = face.landmarks - 56.0
        distances.append(mean_distance(landmarks, ARCFACE_TEMPLATE))
        offsets.append(landmarks - ARCFACE_TEMPLATE)
    # Re-detection on a 112-pixel crop is noisy (a few pixels per point, more on turned or smiling faces), so the
    # typical crop is checked, plus the average offset of each point: a template off by a few pixels (e.g. the
    # 112x96 variant without its +8 shift) or a left/right swap would fail both by a wide margin.
    assert np.median(distances) < 6.0, np.round(distances, 2)
    assert np.abs(np.mean(offsets, axis=0)).max() < 4.0, np.round(np.mean(offsets, axis=0), 2)
