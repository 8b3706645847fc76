"""The secure two-host link and its certificates: a contract's topics between two loopback-only DDS graphs
over one mutually authenticated TLS connection (`link`), what crosses it (`routes`), and the small CA that
issues and revokes the hosts' certificates (`certs`, the `cryptography` library)."""
