"""Start the facerec web app: `python app.py [--home DIR] [--port N] [--share]`.

Defaults: gallery in $FACEREC_HOME or ./facerec_home (created on first start), port $GRADIO_SERVER_PORT or 7860,
bound to 127.0.0.1, never shared publicly unless --share is given. Set FACEREC_ADMIN_PASSWORD (or
--admin-password) to require a password for enrolling, deleting, renaming and importing.
"""

from __future__ import annotations

import argparse
import os
import sys

from facerec.errors import FaceRecError
from facerec.gallery import Gallery
from facerec.settings import Settings
from facerec.ui import MAX_UPLOAD, build_app


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="facerec web app")
    parser.add_argument("--home", help="gallery folder (default: $FACEREC_HOME, else ./facerec_home)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", 7860)))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--share", action="store_true", help="create a public Gradio link (off by default)")
    parser.add_argument("--admin-password", default=os.environ.get("FACEREC_ADMIN_PASSWORD"))
    parser.add_argument("--fpir", type=float,
                        help="accepted stranger-match rate, 0.01 = 1%% (default): sets the threshold for the gallery")
    parser.add_argument("--threshold", type=float, help="pin the match threshold (cosine) instead of --fpir")
    args = parser.parse_args(argv)
    try:
        gallery = Gallery(Settings.from_env(home=args.home, similarity_threshold=args.threshold, fpir=args.fpir))
    except FaceRecError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    app = build_app(gallery, admin_password=args.admin_password or None)
    print(f"facerec: gallery {gallery.settings.home.resolve()} ({gallery.store.counts()[0]} people)", flush=True)
    try:
        app.queue(default_concurrency_limit=4).launch(
            server_name=args.host, server_port=args.port, share=args.share, max_file_size=MAX_UPLOAD,
            show_error=False, footer_links=["api"],
        )
    finally:
        gallery.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
