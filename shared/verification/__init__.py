"""The checks that decide what the report may say: does a statement rest on its quotes?

``grounding`` is the entry point (a quote at its locator; a sentence against its quotes);
``clauses`` splits a sentence into clauses (``anaphora``: quotes that point back), ``clause_reading`` reads what each states
(``quantity_reading`` its quantifiers and frequency; ``certainty_reading`` how sure it is; ``verb_reading`` its verb and voice, ``clause_parts`` its
subject and the parts it cuts into) and ``clause_roles`` who does what in it, ``meaning_anchor``
pairs each clause with the quote clause it restates (``quote_subjects``: whose subject it
keeps, and one grafted from another quote; ``carried_subjects``: a clause with no subject
said of the one before it; ``added_matter``: words and causes no quote
gives; ``figure_binding``: each figure and name from the quote it belongs to), ``meaning`` compares them (polarity,
quantifiers, certainty, direction, figures; ``roles`` who does what to whom, ``scope``
the conditions) and decides contradictions;
``figures`` reads numbers with units (``worded_figures`` those said in words or
notations the quantity parser does not read, ``figure_base`` the figure itself) and ``lexicon`` holds the word lists. ``judge`` asks a
verifier model whether the quotes entail what the deterministic checks let through.

May import ``shared.platform``, ``shared.research`` and ``shared.llm`` (the judge only).
"""
