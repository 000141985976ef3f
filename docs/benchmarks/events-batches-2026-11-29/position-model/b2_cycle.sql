SELECT cycle_b(true);
