"""The official `openai` Python client against a running `shiori serve` over samples/faq.

Usage: openai_client.py BASE_URL API_KEY SHIORI_BIN DATA_DIR. Exits non-zero at the first
check that fails; an ImportError (the package is missing) fails too.
"""

import base64
import json
import math
import struct
import subprocess
import sys

import openai
from openai import OpenAI

base_url, api_key, shiori_bin, data_dir = sys.argv[1:5]
client = OpenAI(base_url=base_url, api_key=api_key, max_retries=0)


def ask(question, model="shiori"):
    completion = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": question}]
    )
    message = completion.choices[0].message
    return completion, message, message.model_extra["shiori"]


models = [model.id for model in client.models.list()]
assert models[0] == "shiori" and "shiori-basic" in models, models
print("ok: models", models)

completion, message, extension = ask("What are the API rate limits on the Business plan?")
assert "600 requests per minute" in message.content, message.content
assert not extension["refused"], extension
assert extension["sources"][0]["doc_id"] == "faq-009", extension["sources"][0]
assert extension["sources"][0]["number"] == 1
assert completion.usage.total_tokens > 0, completion.usage
print("ok: English answer from", extension["sources"][0]["doc_id"])

_, message, extension = ask("パスワードを忘れてしまいました。再設定メールのリンクはどのくらい有効ですか？")
assert "30分" in message.content, message.content
assert not extension["refused"], extension
print("ok: Japanese answer", message.content[:40])

def follow_up(first, then):
    answer = ask(first)[1].content
    completion = client.chat.completions.create(model="shiori", messages=[
        {"role": "user", "content": first},
        {"role": "assistant", "content": answer},
        {"role": "user", "content": then},
    ])
    return completion.choices[0].message.model_extra["shiori"]


# The earlier turns steer retrieval: the same follow-up lands on different documents, and the
# follow-up's own words pick what is quoted from them.
rate = follow_up("What are the API rate limits on the Business plan?", "What about the Starter plan?")
assert not rate["refused"] and rate["sources"][0]["doc_id"] == "faq-009", rate
assert "100 requests per minute" in rate["answer"], rate["answer"]
storage = follow_up("How much storage does a Business workspace include?", "What about the Starter plan?")
assert not storage["refused"] and storage["sources"][0]["doc_id"] == "faq-011", storage
print("ok: follow-ups answered from", rate["sources"][0]["doc_id"], "and", storage["sources"][0]["doc_id"])

_, message, extension = ask("What is the capital of Peru?")
assert extension["refused"], extension
assert "No relevant documents" in message.content, message.content
print("ok: refusal", message.content)

stream = client.chat.completions.create(
    model="shiori-extractive",
    messages=[{"role": "user", "content": "How long is the verification link valid after I sign up?"}],
    stream=True,
    stream_options={"include_usage": True},
)
chunks = list(stream)
text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
ending = [c.model_extra["shiori"] for c in chunks if c.model_extra.get("shiori")]
assert len(chunks) >= 4, chunks
assert chunks[0].choices[0].delta.role == "assistant", chunks[0]
assert ending and ending[0]["answer"] == text and not ending[0]["refused"], (text, ending)
assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0, chunks[-1]
assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
print("ok: streamed", len(chunks), "chunks")

# The legacy completions API (LlamaIndex's OpenAILike(is_chat_model=False)): the prompt is the
# question, answered as the chat completions answer it.
completion = client.completions.create(
    model="shiori", prompt="What are the API rate limits on the Business plan?", max_tokens=64
)
choice = completion.choices[0]
assert completion.object == "text_completion", completion
assert "600 requests per minute" in choice.text, choice.text
assert choice.finish_reason == "stop", choice
assert choice.model_extra["shiori"]["sources"][0]["doc_id"] == "faq-009", choice.model_extra
assert completion.usage.total_tokens > 0, completion.usage
print("ok: completion from", choice.model_extra["shiori"]["sources"][0]["doc_id"])

stream = client.completions.create(
    model="shiori-extractive",
    prompt=["How long is the verification link valid after I sign up?"],
    stream=True,
    stream_options={"include_usage": True},
)
chunks = list(stream)
text = "".join(c.choices[0].text for c in chunks if c.choices)
ending = [c.model_extra["shiori"] for c in chunks if c.model_extra.get("shiori")]
assert all(c.object == "text_completion" for c in chunks), chunks
assert text, chunks
assert ending and ending[0]["answer"] == text and not ending[0]["refused"], (text, ending)
assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0, chunks[-1]
assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
print("ok: streamed completion in", len(chunks), "chunks")

texts = ["Kumo Cloud backups run every night.", "請求書はいつ届きますか"]
embedded = client.embeddings.create(model="shiori", input=texts)
own = json.loads(
    subprocess.run(
        [shiori_bin, "--data-dir", data_dir, "--json", "embed", *texts],
        check=True, capture_output=True, text=True,
    ).stdout
)["vectors"]
assert [d.index for d in embedded.data] == [0, 1]
for served, expected in zip(embedded.data, own):
    cosine = sum(a * b for a, b in zip(served.embedding, expected))
    norms = math.sqrt(sum(a * a for a in served.embedding)) * math.sqrt(sum(b * b for b in expected))
    assert cosine / norms >= 0.9999, cosine / norms
print("ok: embeddings equal shiori embed's")

# Without encoding_format the client asks for base64 and decodes it itself (above); asked for
# explicitly, the string comes back as sent: little-endian f32s.
raw = client.embeddings.create(model="shiori", input=texts[0], encoding_format="base64")
decoded = struct.unpack(f"<{len(own[0])}f", base64.b64decode(raw.data[0].embedding))
assert max(abs(a - b) for a, b in zip(decoded, own[0])) < 1e-4
floats = client.embeddings.create(model="shiori", input=texts[0], encoding_format="float")
assert max(abs(a - b) for a, b in zip(floats.data[0].embedding, decoded)) < 1e-6
print("ok: base64 and float encodings agree over", len(own[0]), "dimensions")

for call, expected in [
    (lambda: ask("q", model="gpt-4o"), openai.NotFoundError),
    (lambda: client.chat.completions.create(model="shiori", messages=[]), openai.BadRequestError),
    (lambda: client.embeddings.create(model="shiori", input=""), openai.BadRequestError),
    (lambda: client.completions.create(model="shiori", prompt=["a", "b"]), openai.BadRequestError),
]:
    try:
        call()
        raise AssertionError(f"no {expected.__name__}")
    except expected as error:
        assert error.body["type"] and error.body["message"], error.body
print("ok: bad requests get OpenAI error bodies")

for tokens in [[1, 2, 3], [[1, 2, 3]]]:
    try:
        client.embeddings.create(model="shiori", input=tokens)
        raise AssertionError(f"token ids {tokens} were accepted")
    except openai.BadRequestError as error:
        assert error.status_code == 400 and error.param == "input", error.body
        assert "token-id input is not supported" in error.message, error.message
print("ok: token-id input is a 400 naming input")

wrong_key = OpenAI(base_url=base_url, api_key="wrong", max_retries=0)
try:
    wrong_key.models.list()
    raise AssertionError("a wrong key was accepted")
except openai.AuthenticationError as error:
    assert error.status_code == 401 and error.body["type"] == "authentication_error", error.body
print("ok: a wrong key is a 401 in OpenAI's shape")
