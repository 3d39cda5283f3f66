// The GTK side of the recording overlay (overlay_linux.c).
int hark_overlay_init(void);
void hark_overlay_main(void);
void hark_overlay_shutdown(void);
// caret: the text cursor the panel goes below (has_caret 0: the bottom
// centre of the monitor under the pointer).
void hark_overlay_post(const char *header, const char *markup, double level, int visible, double opacity,
	int has_caret, int cx, int cy, int cw, int ch);
char *hark_overlay_read(int *visible, int *x, int *y, int *w, int *h);
