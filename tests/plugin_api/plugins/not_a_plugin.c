/* A shared library without the entry point: loading it must fail cleanly. */
int not_a_plugin_answer(void) { return 42; }
