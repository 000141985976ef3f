SELECT cycle_b(false);
