"""Storing runs: the result document (format /2, and /1 read through one migration) and the journal.

``resultfile`` writes and reads documents, ``journal`` writes samples as they
arrive and reads what a crash left, ``legacy`` reads format /1, ``checks``
validates what was read and ``files`` does the atomic writes and bounded reads.
"""
