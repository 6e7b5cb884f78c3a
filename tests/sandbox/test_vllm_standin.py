"""The sandbox's vLLM stand-in (src/sandbox/tools/vllm), run by CTest as tst_vllm_standin, over
real HTTP: `vllm serve`'s command line (positional model, --model, --flag=value, flags without
values, human-readable --max-model-len, several served names), validation errors in vLLM's shape
with the right param, the served name in responses, streaming as vLLM streams (role chunk with
the first token after a prefill delay, multi-token and empty deltas, UTF-8, the last token in
the finish chunk, the usage chunk), cancellation on disconnect, /metrics in Prometheus text with
vLLM's names, labels and buckets, the fault knobs, and /version.
STANDIN names the script the build copied (share/starforge-sandbox/bin/vllm); without it, the
checkout's copy (SOURCE_DIR, else the checkout this file is in)."""

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
import unittest

SOURCE_DIR = os.environ.get("SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STANDIN = os.environ.get("STANDIN") or os.path.join(SOURCE_DIR, "src", "sandbox", "tools", "vllm")
if not os.path.exists(STANDIN):
    STANDIN = os.path.join(SOURCE_DIR, "src", "sandbox", "tools", "vllm")

PROMPT = [{"role": "user", "content": "How does GRPO work?"}]


class Server:
    """One stand-in process on 127.0.0.1 and a port the OS picked (--port 0)."""

    def __init__(self, *args, rate="200", **env):
        environment = dict(os.environ, POD_IP="127.0.0.1", STARFORGE_SANDBOX_TOKEN_RATE=rate, PYTHONUNBUFFERED="1")
        for key in ("STARFORGE_SANDBOX_VLLM_FAULT_ERROR_AFTER", "STARFORGE_SANDBOX_VLLM_FAULT_DROP_AFTER",
                    "STARFORGE_SANDBOX_VLLM_FAULT_SLOW_PREFILL"):
            environment.pop(key, None)
        environment.update(env)
        self.log_path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"vllm-standin-{os.getpid()}-{id(self)}.log")
        self.log = open(self.log_path, "w+")
        self.process = subprocess.Popen([sys.executable, STANDIN, "serve", *args, "--port", "0"],
                                        stdout=self.log, stderr=subprocess.STDOUT, env=environment)
        deadline = time.monotonic() + 10
        self.port = None
        while time.monotonic() < deadline and self.port is None:
            match = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", self.output())
            if match:
                self.port = int(match.group(1))
            elif self.process.poll() is not None:
                raise RuntimeError("the stand-in exited: " + self.output())
            else:
                time.sleep(0.02)
        if self.port is None:
            raise RuntimeError("the stand-in did not start: " + self.output())

    def output(self):
        with open(self.log_path) as f:
            return f.read()

    def close(self):
        self.process.terminate()
        self.process.wait(5)
        self.log.close()
        os.unlink(self.log_path)

    def connection(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)

    def get(self, path):
        c = self.connection()
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, r.getheader("content-type"), body

    def post(self, body, content_type="application/json"):
        c = self.connection()
        data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        c.request("POST", "/v1/chat/completions", body=data, headers={"content-type": content_type})
        r = c.getresponse()
        payload = r.read()
        c.close()
        return r.status, json.loads(payload) if payload.startswith(b"{") else payload

    def stream(self, body):
        """Posts a streaming request; returns the status and [(seconds since sending, event text)]."""
        c = self.connection()
        started = time.monotonic()
        c.request("POST", "/v1/chat/completions", body=json.dumps(dict(body, stream=True)),
                  headers={"content-type": "application/json"})
        r = c.getresponse()
        events, pending = [], b""
        while True:
            line = r.readline()
            if not line:
                break
            pending += line
            if pending.endswith(b"\n\n"):
                events.append((time.monotonic() - started, pending.decode("utf-8").strip()))
                pending = b""
        c.close()
        self.assert_framing(events)
        return r.status, r.getheader("content-type"), events

    @staticmethod
    def assert_framing(events):
        for _, event in events:
            assert event.startswith("data: "), event

    def metrics(self):
        status, content_type, body = self.get("/metrics")
        assert status == 200
        values = {}
        for line in body.decode().splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                values[name] = float(value)
        return content_type, body.decode(), values


def chunks(events):
    return [json.loads(e[6:]) for _, e in events if e != "data: [DONE]" and not e.startswith('data: {"error"')]


LABELS = 'model_name="qwen",engine="0"'


class CommandLine(unittest.TestCase):
    def served(self, *args):
        server = Server(*args)
        try:
            status, _, body = server.get("/v1/models")
            self.assertEqual(status, 200)
            return json.loads(body)["data"]
        finally:
            server.close()

    def test_model_flag_names_the_served_model(self):
        data = self.served("--model", "Qwen/Qwen3-0.6B")
        self.assertEqual([(m["id"], m["root"]) for m in data], [("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B")])

    def test_positional_wins_flags_without_values_and_human_sizes(self):
        data = self.served("--trust-remote-code", "--enable-prefix-caching", "/models/qwen", "--model", "other",
                           "--max-model-len", "1K", "--tensor-parallel-size", "2", "--dtype=bfloat16")
        self.assertEqual([(m["id"], m["root"], m["max_model_len"]) for m in data], [("/models/qwen", "/models/qwen", 1024)])

    def test_flag_equals_value_and_several_served_names(self):
        data = self.served("/models/qwen", "--max_model_len=32k", "-tp", "4", "--served-model-name", "a", "b",
                           "--enable-prefix-caching", "--enable-chunked-prefill", "--disable-custom-thing")
        self.assertEqual([(m["id"], m["max_model_len"]) for m in data], [("a", 32000), ("b", 32000)])
        self.assertEqual(self.served("m", "--max-model-len", "1k")[0]["max_model_len"], 1000)


class Serving(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("/models/qwen", "--served-model-name", "qwen", "alias", "--max-model-len", "1k",
                            "--enable-prefix-caching")

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def error(self, body, status=400, content_type="application/json"):
        got_status, payload = self.server.post(body, content_type)
        self.assertEqual(got_status, status, payload)
        self.assertEqual(set(payload), {"error"})
        self.assertEqual(set(payload["error"]), {"message", "type", "param", "code"})
        self.assertEqual(payload["error"]["code"], status)
        return payload["error"]

    def test_version_and_health(self):
        self.assertEqual(self.server.get("/version")[2], b'{"version":"0.20.0"}')
        self.assertEqual(self.server.get("/health")[:3:2], (200, b""))

    def test_validation_errors(self):
        e = self.error({"messages": [{"role": "user", "content": "word " * 200}], "max_tokens": 900})
        self.assertEqual((e["type"], e["param"]), ("BadRequestError", "input_tokens"))
        self.assertEqual(e["message"], "This model's maximum context length is 1000 tokens. However, you requested 900 output "
                                       "tokens and your prompt contains 204 input tokens, for a total of 1104 tokens. Please "
                                       "reduce the length of the input prompt or the number of requested output tokens. "
                                       "(parameter=input_tokens, value=204)")
        e = self.error({"messages": PROMPT, "max_tokens": 0})
        self.assertEqual((e["type"], e["param"], e["message"]),
                         ("BadRequestError", "max_tokens", "max_tokens must be at least 1, got 0. (parameter=max_tokens, value=0)"))
        e = self.error({"messages": PROMPT, "max_completion_tokens": 5000})
        self.assertEqual(e["param"], "max_completion_tokens")
        self.assertEqual(e["message"], "max_completion_tokens=5000 cannot be greater than max_model_len=max_total_tokens=1000. "
                                       "Please request fewer output tokens. (parameter=max_completion_tokens, value=5000)")
        self.assertEqual(self.error({"messages": PROMPT, "max_completion_tokens": -1})["param"], "max_completion_tokens")
        e = self.error({"messages": PROMPT, "stream_options": {"include_usage": True}})
        self.assertEqual((e["type"], e["param"]), ("Bad Request", "stream_options"))
        self.assertIn("Stream options can only be defined when `stream=True`.", e["message"])
        e = self.error({"messages": "hello"})
        self.assertEqual((e["type"], e["param"]), ("Bad Request", "messages"))
        self.assertIn("Input should be a valid list", e["message"])
        e = self.error({"messages": PROMPT, "temperature": "hot"})
        self.assertEqual((e["type"], e["param"]), ("Bad Request", "temperature"))
        self.assertIn("valid number", e["message"])
        for body in ([1, 2], '"text"', "null", "{not json"):
            self.assertEqual(self.error(body)["type"], "Bad Request")
        self.assertEqual(self.error(PROMPT, content_type="text/plain")["message"],
                         "Unsupported Media Type: Only 'application/json' is allowed")
        e = self.error({"model": "gpt-9", "messages": PROMPT}, status=404)
        self.assertEqual((e["type"], e["param"], e["message"]), ("NotFoundError", "model", "The model `gpt-9` does not exist."))
        # The server still answers after all of that.
        self.assertEqual(self.server.post({"messages": PROMPT, "max_tokens": 2})[0], 200)

    def test_response_names_the_first_served_model(self):
        status, body = self.server.post({"model": "alias", "messages": PROMPT, "max_tokens": 3})
        self.assertEqual((status, body["model"]), (200, "qwen"))
        self.assertEqual(self.server.post({"messages": PROMPT, "max_tokens": 3})[1]["model"], "qwen")
        status, _, events = self.server.stream({"model": "alias", "messages": PROMPT, "max_tokens": 3})
        self.assertEqual({c["model"] for c in chunks(events)}, {"qwen"})

    def test_completion_without_limit_stops(self):
        status, body = self.server.post({"messages": PROMPT})
        self.assertEqual(status, 200)
        self.assertEqual(body["choices"][0]["finish_reason"], "stop")
        self.assertGreater(body["usage"]["completion_tokens"], len(body["choices"][0]["message"]["content"].split()))

    def test_stream_realism(self):
        body = {"messages": [{"role": "user", "content": "tell me something"}], "max_tokens": 30,
                "stream_options": {"include_usage": True}}
        status, content_type, events = self.server.stream(body)
        self.assertEqual((status, content_type), (200, "text/event-stream; charset=utf-8"))
        self.assertEqual(events[-1][1], "data: [DONE]")
        parsed = chunks(events)
        role, content, usage = parsed[0], parsed[1:-1], parsed[-1]
        self.assertEqual(role["choices"][0]["delta"], {"role": "assistant", "content": ""})
        # The role chunk comes with the first token, after the prefill.
        self.assertGreaterEqual(events[0][0], 0.02)
        self.assertLess(events[1][0] - events[0][0], 0.015)
        self.assertIn("content", content[0]["choices"][0]["delta"])
        self.assertEqual(len({(c["id"], c["created"]) for c in parsed}), 1)
        # Usage chunk: no choices, the counts.
        self.assertEqual(usage["choices"], [])
        self.assertEqual(set(usage["usage"]), {"prompt_tokens", "total_tokens", "completion_tokens"})
        self.assertEqual(usage["usage"]["prompt_tokens"], 7)
        generated = usage["usage"]["completion_tokens"]
        deltas = [c["choices"][0]["delta"]["content"] for c in content]
        # Fewer deltas than tokens (some carry two), some empty, some beyond ASCII.
        self.assertLess(len(deltas), generated)
        self.assertIn("", deltas[:-1])
        self.assertTrue(any(not d.isascii() for d in deltas), deltas)
        finals = [c for c in content if c["choices"][0]["finish_reason"]]
        self.assertEqual(finals, content[-1:])
        self.assertEqual(content[-1]["choices"][0]["stop_reason"], None)
        # The same text as without streaming.
        _, plain = self.server.post({"messages": body["messages"], "max_tokens": 30})
        self.assertEqual("".join(deltas), plain["choices"][0]["message"]["content"])
        self.assertEqual(plain["usage"]["completion_tokens"], generated)
        self.assertEqual(content[-1]["choices"][0]["finish_reason"], plain["choices"][0]["finish_reason"])

    def test_length_finish_chunk_carries_the_last_token(self):
        _, full = self.server.post({"messages": PROMPT, "max_tokens": 3})
        status, _, events = self.server.stream({"messages": PROMPT, "max_tokens": 3})
        content = chunks(events)[1:]
        last = content[-1]["choices"][0]
        self.assertEqual(last["finish_reason"], "length")
        self.assertNotEqual(last["delta"]["content"], "")
        self.assertTrue(full["choices"][0]["message"]["content"].endswith(last["delta"]["content"]))
        # Without stream_options, no usage chunk.
        self.assertNotIn("usage", json.dumps(chunks(events)))

    def test_prefill_grows_with_the_prompt(self):
        short = self.server.stream({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1})[2][0][0]
        long = self.server.stream({"messages": [{"role": "user", "content": "word " * 600}], "max_tokens": 1})[2][0][0]
        self.assertGreater(long - short, 0.2)

    def test_metrics_follow_traffic(self):
        content_type, text, before = self.server.metrics()
        self.assertEqual(content_type, "text/plain; version=0.0.4; charset=utf-8")
        for name, kind, help_text in (
                ("vllm:num_requests_running", "gauge", "Number of requests in model execution batches."),
                ("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed."),
                ("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage."),
                ("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed."),
                ("vllm:generation_tokens_total", "counter", "Number of generation tokens processed."),
                ("vllm:request_success_total", "counter", "Count of successfully processed requests."),
                ("vllm:time_to_first_token_seconds", "histogram", "Histogram of time to first token in seconds."),
                ("vllm:inter_token_latency_seconds", "histogram", "Histogram of inter-token latency in seconds."),
                ("vllm:e2e_request_latency_seconds", "histogram", "Histogram of e2e request latency in seconds.")):
            self.assertIn(f"# HELP {name} {help_text}\n# TYPE {name} {kind}\n", text)
        bounds = {name: re.findall(name + r'_bucket\{' + LABELS + r',le="([^"]+)"\}', text) for name in
                  ("vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds", "vllm:e2e_request_latency_seconds")}
        self.assertEqual(bounds["vllm:time_to_first_token_seconds"],
                         "0.001 0.005 0.01 0.02 0.04 0.06 0.08 0.1 0.25 0.5 0.75 1.0 2.5 5.0 7.5 10.0 20.0 40.0 80.0 160.0 640.0 2560.0 +Inf".split())
        self.assertEqual(bounds["vllm:inter_token_latency_seconds"],
                         "0.01 0.025 0.05 0.075 0.1 0.15 0.2 0.3 0.4 0.5 0.75 1.0 2.5 5.0 7.5 10.0 20.0 40.0 80.0 +Inf".split())
        self.assertEqual(bounds["vllm:e2e_request_latency_seconds"],
                         "0.3 0.5 0.8 1.0 1.5 2.0 2.5 5.0 10.0 15.0 20.0 30.0 40.0 50.0 60.0 120.0 240.0 480.0 960.0 1920.0 7680.0 +Inf".split())

        # While a request streams it is running and holds KV cache.
        c = self.server.connection()
        c.request("POST", "/v1/chat/completions", body=json.dumps({"messages": PROMPT, "stream": True}),
                  headers={"content-type": "application/json"})
        r = c.getresponse()
        r.readline()
        _, _, during = self.server.metrics()
        self.assertEqual(during[f"vllm:num_requests_running{{{LABELS}}}"], 1.0)
        self.assertGreater(during[f"vllm:kv_cache_usage_perc{{{LABELS}}}"], 0.0)
        r.read()
        c.close()
        _, _, after_stream = self.server.metrics()
        self.assertEqual(after_stream[f"vllm:num_requests_running{{{LABELS}}}"], 0.0)
        self.assertEqual(after_stream[f"vllm:kv_cache_usage_perc{{{LABELS}}}"], 0.0)

        _, body = self.server.post({"messages": PROMPT, "max_tokens": 4})
        _, _, after = self.server.metrics()

        def delta(name):
            return after[name] - after_stream[name]

        self.assertEqual(delta(f"vllm:prompt_tokens_total{{{LABELS}}}"), body["usage"]["prompt_tokens"])
        self.assertEqual(delta(f"vllm:generation_tokens_total{{{LABELS}}}"), 4)
        self.assertEqual(delta(f'vllm:request_success_total{{{LABELS},finished_reason="length"}}'), 1)
        self.assertEqual(delta(f'vllm:request_success_total{{{LABELS},finished_reason="stop"}}'), 0)
        self.assertEqual(after_stream[f'vllm:request_success_total{{{LABELS},finished_reason="stop"}}']
                         - before[f'vllm:request_success_total{{{LABELS},finished_reason="stop"}}'], 1)
        self.assertEqual(delta(f"vllm:time_to_first_token_seconds_count{{{LABELS}}}"), 1)
        self.assertGreater(delta(f"vllm:time_to_first_token_seconds_sum{{{LABELS}}}"), 0.02)
        self.assertEqual(delta(f"vllm:e2e_request_latency_seconds_count{{{LABELS}}}"), 1)
        self.assertEqual(delta(f'vllm:e2e_request_latency_seconds_bucket{{{LABELS},le="+Inf"}}'), 1)
        self.assertGreaterEqual(delta(f"vllm:inter_token_latency_seconds_count{{{LABELS}}}"), 2)


class Disconnect(unittest.TestCase):
    def setUp(self):
        self.server = Server("/models/qwen", "--served-model-name", "qwen", rate="20")

    def tearDown(self):
        self.server.close()

    def leave_after(self, body, seconds):
        s = socket.create_connection(("127.0.0.1", self.server.port))
        data = json.dumps(body).encode()
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                  b"content-length: %d\r\n\r\n" % len(data) + data)
        time.sleep(seconds)
        s.close()

    def wait_for_abort(self, count):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if self.server.output().count("aborted.") >= count:
                _, _, m = self.server.metrics()
                return m
            time.sleep(0.05)
        self.fail("no abort logged: " + self.server.output())

    def test_plain_and_streaming_requests_are_cancelled(self):
        self.leave_after({"messages": PROMPT}, 0.3)
        m = self.wait_for_abort(1)
        self.assertIn("Request chatcmpl-", self.server.output())
        generated = m[f"vllm:generation_tokens_total{{{LABELS}}}"]
        self.assertGreater(generated, 0)
        self.assertLess(generated, 10)  # 25 tokens at 20/s would take 1.25 s
        time.sleep(0.3)
        _, _, later = self.server.metrics()
        self.assertEqual(later[f"vllm:generation_tokens_total{{{LABELS}}}"], generated)
        self.assertEqual(later[f"vllm:num_requests_running{{{LABELS}}}"], 0.0)
        self.assertEqual(later[f"vllm:kv_cache_usage_perc{{{LABELS}}}"], 0.0)
        self.leave_after({"messages": PROMPT, "stream": True}, 0.3)
        m = self.wait_for_abort(2)
        self.assertEqual(self.server.output().count("aborted."), 2)
        # As in vLLM, a client's abort is not a finished request: no finished_reason counts it.
        for reason in ("stop", "length", "abort", "error"):
            self.assertEqual(m[f'vllm:request_success_total{{{LABELS},finished_reason="{reason}"}}'], 0)
        self.assertEqual(m[f"vllm:e2e_request_latency_seconds_count{{{LABELS}}}"], 0)


class Faults(unittest.TestCase):
    def test_error_mid_stream(self):
        server = Server("/models/qwen", "--served-model-name", "qwen", STARFORGE_SANDBOX_VLLM_FAULT_ERROR_AFTER="3")
        try:
            status, _, events = server.stream({"messages": PROMPT})
            self.assertEqual(status, 200)
            self.assertEqual(events[-1][1], "data: [DONE]")
            self.assertTrue(events[-2][1].startswith('data: {"error": {"message": '), events[-2][1])
            error = json.loads(events[-2][1][6:])["error"]
            self.assertEqual((error["type"], error["code"], error["param"]), ("InternalServerError", 500, None))
            content = chunks(events)[1:]
            self.assertTrue(content)
            self.assertFalse(any(c["choices"][0]["finish_reason"] for c in content))
            status, body = server.post({"messages": PROMPT})
            self.assertEqual((status, body["error"]["type"]), (500, "InternalServerError"))
            _, _, m = server.metrics()
            self.assertEqual(m[f'vllm:request_success_total{{{LABELS},finished_reason="error"}}'], 2)
        finally:
            server.close()

    def test_dropped_connection(self):
        server = Server("/models/qwen", "--served-model-name", "qwen", STARFORGE_SANDBOX_VLLM_FAULT_DROP_AFTER="3")
        try:
            status, _, events = server.stream({"messages": PROMPT})
            self.assertEqual(status, 200)
            self.assertNotIn("data: [DONE]", [e for _, e in events])
            parsed = chunks(events)
            self.assertGreater(len(parsed), 1)
            self.assertFalse(any(c["choices"][0]["finish_reason"] for c in parsed))
            with self.assertRaises((http.client.HTTPException, ConnectionError)):
                server.post({"messages": PROMPT})
            self.assertEqual(server.get("/health")[0], 200)
        finally:
            server.close()

    def test_slow_prefill(self):
        server = Server("/models/qwen", "--served-model-name", "qwen", STARFORGE_SANDBOX_VLLM_FAULT_SLOW_PREFILL="0.6")
        try:
            status, _, events = server.stream({"messages": PROMPT, "max_tokens": 2})
            self.assertEqual(status, 200)
            self.assertGreaterEqual(events[0][0], 0.6)
            self.assertLess(events[-1][0], 1.5)
        finally:
            server.close()


if __name__ == "__main__":
    unittest.main()
