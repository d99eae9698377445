"""How the package narrates a result: the floor that the page and the manuscript stand on.

It imports only NumPy, pandas and the package's ground floor, so that every room that writes
about a result (:mod:`longitudinal.change`, :mod:`longitudinal.predict`,
:mod:`longitudinal.report`, :mod:`longitudinal.manuscript`) imports it downward, at the top of
its modules. One module per question:

* :mod:`.numbers`: how a number, a p value, an interval is written (one format, APA 7, for the
  page and the manuscript);
* :mod:`.gates`: when an estimate may be read in words, and the sentences that say a model
  failed its checks;
* :mod:`.markup`: the inline markup of manuscript text and the one escaping rule per format;
* :mod:`.sentences`: the APA results sentences of each analysis.
"""

__all__: list[str] = []
