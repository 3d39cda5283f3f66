// The GTK side of the recording overlay (overlay_linux.c).
int hark_overlay_init(void);
void hark_overlay_main(void);
void hark_overlay_shutdown(void);
void hark_overlay_post(const char *header, const char *markup, double level, int visible, double opacity);
char *hark_overlay_read(int *visible, int *x, int *y, int *w, int *h);
