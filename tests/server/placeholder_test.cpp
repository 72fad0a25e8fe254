// Removed once the server's own tests land.
