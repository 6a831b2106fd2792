-- HOST_FINISH. ARGV: P, worker, host, token, elapsed_ms, timed_out ('1'/'0'), started ('1'/'0').
-- Free the slot; a started fetch slower than FOCUS_SLOW_SECONDS (or timed out) marks the server
-- slow: one connection, and a wait of slow_factor x response time after each fetch (Heritrix).

return finish_slot(ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
