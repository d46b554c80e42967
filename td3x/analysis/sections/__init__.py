"""The report's sections, each one module with its numbers, tables, Markdown and plots. It imports ``stats``,
``reading``, ``render`` and ``comparisons`` below it; ``report`` above it calls the sections in order.
"""
