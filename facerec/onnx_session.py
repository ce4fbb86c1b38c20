"""One way to open an onnxruntime session (CPU, quiet, a chosen thread count), lazily and once per object."""

from __future__ import annotations

import threading


class LazySession:
    """Creates the `onnxruntime.InferenceSession` on first use; safe to share between threads.

    `model` is a file path or the model's bytes; `num_threads` 0 lets onnxruntime use every core.
    """

    def __init__(self, model, num_threads: int = 0) -> None:
        self._model = model
        self.num_threads = num_threads
        self._session = None
        self._lock = threading.Lock()

    def get(self):
        if self._session is None:
            with self._lock:
                if self._session is None:
                    import onnxruntime as ort

                    options = ort.SessionOptions()
                    options.intra_op_num_threads = self.num_threads
                    options.log_severity_level = 3
                    # Idle worker threads would otherwise spin for a while after each run, taking the cores
                    # the gallery search (a multi-threaded BLAS product) needs right after embedding.
                    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                    model = self._model() if callable(self._model) else self._model
                    self._session = ort.InferenceSession(
                        model if isinstance(model, bytes) else str(model), options,
                        providers=["CPUExecutionProvider"],
                    )
        return self._session
