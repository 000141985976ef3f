SELECT cycle_a();
