"""Conversations: the history Crossover keeps per tenant (store), the window sent to the model
(window), and the public message shape <-> Converse messages (messages)."""
