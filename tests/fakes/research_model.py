"""A model for every tool of a research job, for the loopback LLM fakes: plausible
where it reads its data and adversarial where a real model goes wrong.

Each answer is built from the request alone (the forced tool's name, its schema in
``tools[0].input_schema`` and the data blocks of the prompt), so a whole job runs
against it with no scripting; with a per-request seed taken from the prompt, the same
request always gets the same answer, whatever order concurrent calls arrive in.

* planning (``record_clarification``, ``record_brief``, ``record_sub_questions``,
  ``record_queries``): never asks back; a checklist, sub-questions and searches made of
  the question's own content words;
* ``record_digest``: the source's sentences that share most words with the question,
  copied verbatim as evidence, plus one passage reworded (a quote that does not
  verify);
* ``record_claims``: a claim per snippet, one of its sentences verbatim (these verify),
  plus invented ones: a real sentence citing a snippet id that was never shown, a
  paraphrase that strays from its snippet, and a sentence with a number its snippet
  does not have; a share (``invalid_share``) of first asks gets an answer of the
  wrong shape, and the re-ask that follows a proper one;
* ``record_coverage``: every item satisfied, by real claim ids and a bogus one;
* ``write_report`` / ``revise_sentences`` / ``record_review``: the adversarial report
  writer of :mod:`tests.fakes.report_writer` (invented sentences, bogus claim ids,
  model-written ``[n]`` markers, revisions that invent again).

A re-ask (the original prompt, the rejected answer, a request to fix it) is answered
from the original prompt's data. Anything else gets a schema-valid answer made of the
prompt's words. Token usage is
the fake server's (about 4 characters a token of the request and of the answer).
Serve it with ``ResearchModel.serve()`` or ``python -m tests.fakes.research_model``.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field, replace
from typing import Any

from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import RecordedRequest, Step, ToolCall, prompt_words, schema_responder, serve_forever, text_of
from tests.fakes.report_writer import ReportWriter, blocks

__all__ = ["BOGUS_SNIPPET", "HONEST_CLAIMS", "ResearchModel", "STRAY_WORDS"]

BOGUS_SNIPPET = "s99.e9"
HONEST_CLAIMS = 12  # per answer; scoring reads at most 15 claims of one answer
# A paraphrase that drifts: few of its words are in the snippet it cites.
STRAY_WORDS = "Practitioners broadly regard {topic} as an obsolete and discouraged technique nowadays."
_QUESTION_WORDS = frozenset("what how why when where which who whom whose does do is are was were can "
                            "should would could will in of the a an and or to for with on by from".split())
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")
_WORD = re.compile(r"[A-Za-z0-9_]+")
_MAX_EVIDENCE = re.compile(r"each at most (\d+) characters")
_MAX_SNIPPETS = re.compile(r"at most (\d+) passages")


def _sentences(text: str) -> list[str]:
    out = []
    for para in text.split("\n"):
        out.extend(s.strip() for s in _SENTENCE_END.split(para) if s.strip())
    return out


def _content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in _QUESTION_WORDS and len(w) > 2}


@dataclass
class ResearchModel:
    """The responder (``AnthropicFake(responder=ResearchModel())``)."""

    seed: int = 7
    invalid_share: float = 0.25  # of first claims asks answered with the wrong shape
    writer: ReportWriter = field(default_factory=lambda: ReportWriter(adversarial=True))
    seen: list[str] = field(default_factory=list)  # forced tools, in arrival order

    def __call__(self, request: RecordedRequest) -> Step:
        tool = request.forced_tool or ""
        self.seen.append(tool)
        messages = request.body.get("messages") or []
        users = [text_of(m.get("content")) for m in messages if m.get("role") == "user"]
        # A re-ask repeats the original prompt first; its data blocks are there.
        prompt = users[0] if users else request.prompt
        reask = len(messages) > 1
        rng = random.Random(f"{self.seed}:{tool}:{hashlib.sha256(prompt.encode()).hexdigest()}")
        if tool == "record_clarification":
            return ToolCall(input={"needs_clarification": False, "questions": []})
        if tool == "record_brief":
            return ToolCall(input=self.brief(prompt))
        if tool == "record_sub_questions":
            return ToolCall(input=self.sub_questions(prompt))
        if tool == "record_queries":
            return ToolCall(input=self.queries(prompt))
        if tool == "record_digest":
            return ToolCall(input=self.digest(prompt, request.system, rng))
        if tool == "record_claims":
            if not reask and rng.random() < self.invalid_share:
                return ToolCall(input={"claims": "The snippets support several claims about the question."})
            return ToolCall(input=self.claims(prompt, rng))
        if tool == "record_coverage":
            answer = self.writer.coverage(prompt)
            for item in answer["items"]:
                item["claim_ids"] = [*item["claim_ids"], "cl999"]
            return ToolCall(input=answer)
        if tool in ("write_report", "revise_sentences", "record_review"):
            return self.writer(request if not reask else replace(request, prompt=prompt))
        return schema_responder(request)

    # -- planning ---------------------------------------------------------------------

    @staticmethod
    def _question(prompt: str) -> str:
        found = blocks(prompt, "question")
        if found:
            return " ".join(found[0][1].split())
        first = prompt.split("\n", 1)[0]
        return first.removeprefix("Question:").strip() or "the question"

    @staticmethod
    def _topic(question: str) -> str:
        words = [w for w in prompt_words(question) if w.lower() not in _QUESTION_WORDS]
        return " ".join(words[:5]) or question

    def brief(self, prompt: str) -> dict[str, Any]:
        question = self._question(prompt)
        topic = self._topic(question)
        return {
            "refined_question": question,
            "in_scope": [f"what the documentation says about {topic}"],
            "out_of_scope": ["opinions not found in the sources"],
            "key_terms": topic.split()[:6],
            "checklist": [f"What {topic} is and what it is for", f"How {topic} works, step by step",
                          f"Limits, pitfalls and alternatives of {topic}"],
        }

    def sub_questions(self, prompt: str) -> dict[str, Any]:
        question = self._question(prompt)
        topic = self._topic(question)
        return {"sub_questions": [
            {"question": question, "kind": "independent", "web_queries": [topic], "pubmed_queries": []},
            {"question": f"How does {topic} work?", "kind": "independent",
             "web_queries": [f"{topic} how it works"], "pubmed_queries": []},
            {"question": f"What are the pitfalls of {topic}?", "kind": "independent",
             "web_queries": [f"{topic} pitfalls"], "pubmed_queries": []},
        ]}

    def queries(self, prompt: str) -> dict[str, Any]:
        listed = "\n".join(text for _, text in blocks(prompt, "open_items"))
        out = []
        for line in listed.splitlines():
            m = re.match(r"-\s*(\S+)\s*\([^)]*\):\s*(.+)", line)
            if m:
                out.append({"item_id": m.group(1), "web_queries": [self._topic(m.group(2))], "pubmed_queries": []})
        return {"queries": out}

    # -- digest -----------------------------------------------------------------------

    def digest(self, prompt: str, system: str, rng: random.Random) -> dict[str, Any]:
        question = self._question(prompt)
        wanted = _content_words(question)
        source = blocks(prompt, "source")
        text = source[0][1] if source else ""
        max_chars = int(m.group(1)) if (m := _MAX_EVIDENCE.search(system)) else 400
        max_snippets = int(m.group(1)) if (m := _MAX_SNIPPETS.search(system)) else 5
        sentences = [s for s in _sentences(text) if 20 <= len(s) <= max_chars]
        ranked = sorted(sentences, key=lambda s: (-len(wanted & _content_words(s)), sentences.index(s)))
        best = ranked[: max(1, max_snippets - 1)]
        evidence = [{"text": s, "relevance": round(0.9 - 0.1 * i, 2)} for i, s in enumerate(best)]
        if best:  # a quotation "tidied up": it no longer matches the source
            words = best[0].split()
            rng.shuffle(words)
            evidence.append({"text": " ".join(words), "relevance": 0.5})
        return {
            "summary": " ".join(best[:2]) or "The source says little about the question.",
            "key_points": best[:3],
            "evidence": evidence,
        }

    # -- claims -----------------------------------------------------------------------

    def claims(self, prompt: str, rng: random.Random) -> dict[str, Any]:
        question = self._question(prompt)
        wanted = _content_words(question)
        items = [line.split(":", 1)[0].strip() for _, text in blocks(prompt, "checklist")
                 for line in text.splitlines() if ":" in line]
        honest = []
        for attrs, text in blocks(prompt, "snippet"):
            sentences = _sentences(" ".join(text.split())) or [text]
            sentence = max(sentences, key=lambda s: (len(wanted & _content_words(s)), -sentences.index(s)))
            honest.append({"text": sentence, "supporting": [attrs["id"]], "contradicting": [],
                           "checklist_item_ids": items[: 1 + rng.randrange(max(1, len(items)))]})
        if not honest:
            return {"claims": []}
        # A model answers with a handful of claims, the ones nearest the question;
        # together with the invented three they stay within what scoring reads.
        nearest = sorted(range(len(honest)), key=lambda i: (-len(wanted & _content_words(honest[i]["text"])), i))
        honest = [honest[i] for i in sorted(nearest[:HONEST_CLAIMS])]
        invented = []
        picks = [rng.randrange(len(honest)) for _ in range(3)]
        invented.append({"text": honest[picks[0]]["text"], "supporting": [BOGUS_SNIPPET], "contradicting": [],
                         "checklist_item_ids": items[:1]})
        invented.append({"text": STRAY_WORDS.format(topic=self._topic(question)),
                         "supporting": honest[picks[1]]["supporting"], "contradicting": [],
                         "checklist_item_ids": items[:1]})
        figure = rng.choice((17, 42, 93, 1024))
        invented.append({"text": honest[picks[2]]["text"].rstrip(".") + f", in {figure}% of programs.",
                         "supporting": honest[picks[2]]["supporting"], "contradicting": [],
                         "checklist_item_ids": items[:1]})
        answer = honest + invented
        rng.shuffle(answer)
        return {"claims": answer}

    # -- serving ----------------------------------------------------------------------

    def serve(self) -> AnthropicFake:
        """A started AnthropicFake answering with this model (stop it when done)."""
        return AnthropicFake(responder=self).start()


if __name__ == "__main__":
    serve_forever(AnthropicFake(responder=ResearchModel()))
