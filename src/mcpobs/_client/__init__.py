"""The client side: one CLIENT span per request a `Client` sends, joined to the server's trace."""
