"""Start the facerec web app: `python app.py [--home DIR] [--port N] [--share]`.

Defaults: gallery in $FACEREC_HOME or ./facerec_home (created on first start), port $GRADIO_SERVER_PORT or 7860,
bound to 127.0.0.1, never shared publicly unless --share is given. Set FACEREC_ADMIN_PASSWORD to require a
password for everything that shows or changes enrolled people (see SECURITY.md); the
--admin-password option works too, but every local user can read it in `ps`.

Every file the app writes (gallery, index, Gradio's cache of uploads and served pictures, exports) is readable by
its owner only; Gradio's cache is a private folder per run, in memory (`/dev/shm/facerec-<uid>/run-<pid>`) where
there is room, else in the gallery folder (`webcache/run-<pid>`), unless GRADIO_TEMP_DIR says otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import sys
from pathlib import Path

from facerec.errors import FaceRecError
from facerec.gallery import Gallery
from facerec.allocator import return_freed_memory
from facerec.settings import PASSWORD_ENV, TRUSTED_PROXIES_ENV, ServerSettings, Settings
from facerec.web.cache import private_web_cache, web_cache_root
from facerec.web.upload_quota import DEFAULT_LIMIT_BYTES as DEFAULT_QUOTA_BYTES
from facerec.words.threshold import threshold_sentence



def build_parser(server: ServerSettings | None = None) -> argparse.ArgumentParser:
    """The options; `server` (the environment's settings, read by facerec.settings) gives the port's default."""
    server = server or ServerSettings()
    parser = argparse.ArgumentParser(
        description="facerec web app",
        epilog=f"Admin password: set {PASSWORD_ENV} in the environment. It guards enrolling, adding photos, "
               "renaming, deleting, importing, exporting, the people list and the health report; detect, verify "
               "and identify (which then names only matching faces) stay open.")
    parser.add_argument("--home", help="gallery folder (default: $FACEREC_HOME, else ./facerec_home)")
    parser.add_argument("--db", metavar="URL",
                        help="gallery database (default: $FACEREC_DATABASE_URL, else gallery.db in the gallery "
                             "folder); postgresql+psycopg://... lets several app replicas share one gallery "
                             "(docs/deployment.md)")
    parser.add_argument("--port", type=int, default=server.port,
                        help=f"port (default: $GRADIO_SERVER_PORT, else {server.port})")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--share", action="store_true", help="create a public Gradio link (off by default)")
    parser.add_argument("--admin-password", metavar="PW",
                        help=f"discouraged: every local user can read it in `ps`; set {PASSWORD_ENV} instead")
    parser.add_argument("--fpir", type=float,
                        help="accepted stranger-match rate, 0.01 = 1%% (default): sets the threshold for the gallery")
    parser.add_argument("--threshold", type=float,
                        help="pin the match threshold (a normalised score, e.g. 6) instead of --fpir")
    parser.add_argument("--trusted-proxy", metavar="ADDRESS", action="append", default=None,
                        help="a reverse proxy whose X-Forwarded-For header names the real client (repeat for several; "
                             f"default: ${TRUSTED_PROXIES_ENV}, comma-separated, else none: the header is ignored)")
    return parser


def launch_problem(error: OSError, args: argparse.Namespace) -> str:
    """Why the web server did not start, in facerec's terms (Gradio's message names `server_port` of launch())."""
    if "port" in str(error).lower():
        return port_in_use(args)
    return f"the web server could not start ({' '.join(str(error).split())[:200]})"


def port_in_use(args: argparse.Namespace) -> str:
    return (f"port {args.port} on {args.host} is in use (another facerec, or another program): start with "
            f"--port N, for example --port {args.port + 1}")


def port_taken(host: str, port: int) -> bool:
    """Whether another program listens on host:port already: checked before the gallery is opened, so a second
    copy says only why it cannot start (it printed the gallery's and the API's state first)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def upload_quota_bytes(server: ServerSettings) -> int:
    """What all recent uploads together may hold: $FACEREC_UPLOAD_QUOTA_MB, else 512 MiB (facerec.web.upload_quota)."""
    return int(server.upload_quota_mb * (1 << 20)) if server.upload_quota_mb else DEFAULT_QUOTA_BYTES


def trusted_proxies(args: argparse.Namespace, server: ServerSettings) -> list[str]:
    """The addresses whose X-Forwarded-For / X-Forwarded-Proto headers are believed: --trusted-proxy, else
    $FACEREC_TRUSTED_PROXIES, else none.

    Why none by default: uvicorn believes those headers from 127.0.0.1, and this app binds 127.0.0.1, so every
    client looked like a proxy and could name any address it liked: a new address per wrong admin password dodged
    the lockout, and naming someone else's address locked them out."""
    if args.trusted_proxy:
        return [address.strip() for address in args.trusted_proxy if address.strip()]
    return list(server.trusted_proxies)


def admin_password(args: argparse.Namespace, server: ServerSettings) -> tuple[str | None, list[str]]:
    """(the admin password or None, warnings to print)."""
    warnings = []
    password = server.admin_password
    if args.admin_password:
        warnings.append(f"--admin-password is visible to every local user (`ps`, shell history); set {PASSWORD_ENV} "
                        "instead")
        password = args.admin_password
    if password is None and (args.share or args.host not in ("127.0.0.1", "localhost", "::1")):
        warnings.append(f"no admin password while reachable from other machines: anyone can enroll, delete, list and "
                        f"export faces; set {PASSWORD_ENV}")
    return password, warnings


def _api_state(api) -> str:
    active = sum(key.active for key in api.state.keys.list())
    if active:
        return f"on, {active} active key(s)"
    return "off until a key is created (`facerec api-key create --role admin`, with this gallery's --home)"


def main(argv: list[str] | None = None) -> int:
    os.umask(0o077)  # the gallery, the web cache and exports hold faces: owner only
    return_freed_memory()  # before any thread: photos decoded in many worker threads must not pile up
    try:
        server = ServerSettings.from_env()
    except FaceRecError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    args = build_parser(server).parse_args(argv)
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(trusted_proxies(args, server))  # read by uvicorn when Gradio starts it
    if port_taken(args.host, args.port):
        print(f"error: {port_in_use(args)}", file=sys.stderr, flush=True)
        return 1
    password, warnings = admin_password(args, server)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    try:
        gallery = Gallery(Settings.from_env(home=args.home, database_url=args.db, similarity_threshold=args.threshold,
                                            fpir=args.fpir))
    except FaceRecError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for notice in [*gallery.services().maintenance.notices, *gallery.services().maintenance.server_warnings()]:
        print(f"warning: {notice}", file=sys.stderr, flush=True)
    web_cache, quota = None, upload_quota_bytes(server)
    if server.temp_dir:
        scratch = Path(server.temp_dir)
    else:
        scratch = web_cache = private_web_cache(web_cache_root(Path(gallery.services().settings.home), quota))
        os.environ["GRADIO_TEMP_DIR"] = str(web_cache)  # read by Gradio when it is imported below

    from facerec.api import API_PREFIX
    from facerec.packs.catalog import pack_of
    from facerec.web.server import assemble  # imports Gradio, which reads GRADIO_TEMP_DIR
    from facerec.words.startup import startup_lines

    web = assemble(gallery, password, scratch, quota)
    # `kill` (SIGTERM) stops the server as Ctrl-C does, so the gallery is closed and the web cache deleted.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    services = gallery.services()
    people = services.directory.count()
    print(f"facerec: gallery {Path(services.settings.home).resolve()} ({people} people)", flush=True)
    print(f"facerec: {threshold_sentence(services.thresholds.in_force(with_people=True))}", flush=True)
    print(f"facerec: REST API at {API_PREFIX} (docs at {API_PREFIX}/docs): {_api_state(web.api)}", flush=True)
    settings = services.settings
    pack = pack_of(settings.model_path)
    for line in startup_lines(pack.title, pack.commercial_use.split(":")[0], password is not None,
                              settings.suggestions, settings.suggestions_days, settings.suggestions_memory,
                              settings.store_crops):
        print(f"facerec: {line}", flush=True)
    try:
        try:
            web.launch(args.host, args.port, args.share)
        except OSError as error:
            print(f"error: {launch_problem(error, args)}", file=sys.stderr, flush=True)
            return 1
        page = web.page
        print(f"facerec: running on {page.local_url}"
              + (f", public link {page.share_url}" if args.share and page.share_url else
                 " (add --share for a public link)" if not args.share else ""), flush=True)
        page.block_thread()
    finally:
        gallery.close()
        if web_cache is not None:
            shutil.rmtree(web_cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
