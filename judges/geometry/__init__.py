"""The ``geometry`` judge: structured-task criteria measured on rendered part masks.

:mod:`.judge` is the judge (what a profile of kind ``geometry`` creates); :mod:`.measure` turns
a mask PNG into regions and measures them (OpenCV, Shapely); :mod:`.scene` holds one frame's
measured parts and the thresholds; :mod:`.rules` decides the relation criteria (contact,
seating, joins) and :mod:`.motion` the animation criteria across frames; :mod:`.memo` reads
measurements through the run's :class:`~judges.measure_memo.MeasurementMemo` so a re-score
decodes no mask twice. Pure: PNG bytes in memory, no I/O.
"""
