"""Making the bots' data and weights: the learned bots' self-play samples,
training and bid statistics (``data``, ``train``, ``analysis``, ``progress``;
PyTorch is imported only by ``train``), the nil sets counted over tournament
games (``nil_sets``) and the success curves' calibration on them
(``sc_calibration``). What a bot loads at the table stays in ``bots``.
"""
