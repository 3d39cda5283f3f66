//go:build linux && cgo

// The overlay's GTK popup. Every GTK call runs on the GTK main loop's
// thread (g_idle_add): the desktop app's loop is Wails', elsewhere the
// overlay runs its own (hark_overlay_main).
#include <gtk/gtk.h>
#include <stdlib.h>
#include <string.h>
#include "overlay_linux.h"

extern void harkOverlayClicked(void);
extern void harkOverlayPlace(int has_caret, int cx, int cy, int cw, int ch, int ax, int ay, int aw, int ah,
	int w, int h, int *x, int *y);

static GtkWidget *win, *header, *level, *text;
static int shut; // the overlay's own loop has ended: nothing more is drawn

static gboolean on_click(GtkWidget *w, GdkEventButton *e, gpointer d) {
	harkOverlayClicked();
	return TRUE;
}

static void build(void) {
	// A popup: override-redirect, so the window manager never focuses it
	// and it stays above normal windows.
	win = gtk_window_new(GTK_WINDOW_POPUP);
	gtk_window_set_title(GTK_WINDOW(win), "Hark dictation");
	gtk_window_set_keep_above(GTK_WINDOW(win), TRUE);
	gtk_window_set_accept_focus(GTK_WINDOW(win), FALSE);
	gtk_window_set_focus_on_map(GTK_WINDOW(win), FALSE);
	gtk_window_set_type_hint(GTK_WINDOW(win), GDK_WINDOW_TYPE_HINT_NOTIFICATION);
	gtk_widget_set_size_request(win, 460, -1);
	gtk_widget_add_events(win, GDK_BUTTON_PRESS_MASK);
	g_signal_connect(win, "button-press-event", G_CALLBACK(on_click), NULL);

	// Styled by name: the provider is the screen's, and the desktop app's
	// own window (Wails') must keep its look.
	gtk_widget_set_name(win, "hark-overlay");
	GtkCssProvider *css = gtk_css_provider_new();
	gtk_css_provider_load_from_data(css,
		"#hark-overlay { background-color: #1f2329; color: #f2f4f7; }"
		"#hark-overlay label.header { color: #9aa4b2; font-size: 0.9em; }", -1, NULL);
	gtk_style_context_add_provider_for_screen(gdk_screen_get_default(), GTK_STYLE_PROVIDER(css),
		GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);

	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
	gtk_container_set_border_width(GTK_CONTAINER(box), 12);
	header = gtk_label_new("");
	gtk_label_set_xalign(GTK_LABEL(header), 0);
	gtk_style_context_add_class(gtk_widget_get_style_context(header), "header");
	level = gtk_level_bar_new_for_interval(0, 1);
	text = gtk_label_new("");
	gtk_label_set_xalign(GTK_LABEL(text), 0);
	gtk_label_set_line_wrap(GTK_LABEL(text), TRUE);
	gtk_label_set_max_width_chars(GTK_LABEL(text), 56);
	gtk_label_set_lines(GTK_LABEL(text), 3);
	gtk_label_set_ellipsize(GTK_LABEL(text), PANGO_ELLIPSIZE_START); // the newest words stay in view
	gtk_box_pack_start(GTK_BOX(box), header, FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(box), level, FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(box), text, FALSE, FALSE, 0);
	gtk_container_add(GTK_CONTAINER(win), box);
	gtk_widget_show_all(box);
}

typedef struct {
	char *header, *markup;
	double level, opacity;
	int visible;
	int has_caret, cx, cy, cw, ch;
} update;

// The last placement: the work area of the monitor chosen, the caret and
// the panel's size it was for. A frame re-places the panel only when it
// appears, when its caret changes or when its size does (on the same
// monitor): not at each level event, and a bottom-centre panel does not
// follow the pointer across monitors mid-recording.
static GdkRectangle placed_area;
static int placed, placed_caret, placed_cx, placed_cy, placed_cw, placed_ch, placed_w, placed_h;
static char *last_markup; // the text label's markup: unchanged, it is not set again

// size is the panel's size: its natural one until it is first shown (so
// that the first frame maps at the right place), then the window's.
static void size(int *w, int *h) {
	if (gtk_widget_get_visible(win)) {
		gtk_window_get_size(GTK_WINDOW(win), w, h);
		return;
	}
	GtkRequisition nat;
	gtk_widget_get_preferred_size(win, NULL, &nat);
	*w = nat.width;
	*h = nat.height;
}

// place puts the panel below the text cursor on its monitor, or at the
// bottom centre of the monitor under the pointer (the active screen); the
// geometry is Go's (app/overlay/place, shared with macOS). pick chooses
// the monitor anew; otherwise the last one's work area is kept.
static void place(update *u, int pick) {
	if (pick || !placed) {
		GdkDisplay *d = gdk_display_get_default();
		GdkMonitor *m = NULL;
		if (u->has_caret) {
			m = gdk_display_get_monitor_at_point(d, u->cx, u->cy);
		} else {
			GdkSeat *seat = gdk_display_get_default_seat(d);
			if (seat) {
				int px, py;
				gdk_device_get_position(gdk_seat_get_pointer(seat), NULL, &px, &py);
				m = gdk_display_get_monitor_at_point(d, px, py);
			}
		}
		if (!m) m = gdk_display_get_primary_monitor(d);
		if (!m) m = gdk_display_get_monitor(d, 0);
		if (!m) return;
		gdk_monitor_get_workarea(m, &placed_area);
	}
	GdkRectangle a = placed_area;
	int w, h, x, y;
	size(&w, &h);
	harkOverlayPlace(u->has_caret, u->cx, u->cy, u->cw, u->ch, a.x, a.y, a.width, a.height, w, h, &x, &y);
	gtk_window_move(GTK_WINDOW(win), x, y);
	placed = 1;
	placed_caret = u->has_caret;
	placed_cx = u->cx; placed_cy = u->cy; placed_cw = u->cw; placed_ch = u->ch;
	placed_w = w; placed_h = h;
}

static gboolean apply(gpointer p) {
	update *u = p;
	if (shut) goto done;
	if (!win) build();
	gtk_label_set_text(GTK_LABEL(header), u->header);
	if (!last_markup || strcmp(last_markup, u->markup) != 0) {
		gtk_label_set_markup(GTK_LABEL(text), u->markup);
		free(last_markup);
		last_markup = strdup(u->markup);
	}
	gtk_level_bar_set_value(GTK_LEVEL_BAR(level), u->level);
	gtk_widget_set_opacity(win, u->opacity);
	if (u->visible) {
		int appear = !gtk_widget_get_visible(win);
		int moved = !placed || u->has_caret != placed_caret ||
			(u->has_caret && (u->cx != placed_cx || u->cy != placed_cy || u->cw != placed_cw || u->ch != placed_ch));
		if (appear || moved) {
			place(u, 1); // before the show: the first frame maps where it belongs
		} else {
			int w, h;
			size(&w, &h);
			if (w != placed_w || h != placed_h) place(u, 0);
		}
		gtk_widget_show(win);
	} else {
		gtk_widget_hide(win);
	}
done:
	free(u->header);
	free(u->markup);
	free(u);
	return G_SOURCE_REMOVE;
}

void hark_overlay_post(const char *h, const char *markup, double lv, int visible, double opacity,
		int has_caret, int cx, int cy, int cw, int ch) {
	update *u = malloc(sizeof *u);
	u->header = strdup(h);
	u->markup = strdup(markup);
	u->level = lv;
	u->visible = visible;
	u->opacity = opacity;
	u->has_caret = has_caret;
	u->cx = cx; u->cy = cy; u->cw = cw; u->ch = ch;
	g_idle_add(apply, u);
}

int hark_overlay_init(void) { return gtk_init_check(NULL, NULL); }
void hark_overlay_main(void) { gtk_main(); }

// hark_overlay_shutdown ends the overlay's own loop and closes its display
// connection (tests, before their X server goes: GDK exits the process
// when its display dies).
static gboolean shutdown_cb(gpointer p) {
	shut = 1;
	if (win) gtk_widget_destroy(win);
	win = NULL;
	free(last_markup);
	last_markup = NULL;
	placed = 0;
	gdk_display_close(gdk_display_get_default());
	gtk_main_quit();
	return G_SOURCE_REMOVE;
}
void hark_overlay_shutdown(void) { g_idle_add(shutdown_cb, NULL); }


// hark_overlay_read returns what the panel shows ("header\ntext") and
// where, read on the GTK thread (for tests).
typedef struct {
	GMutex mu;
	GCond cond;
	int done, visible, x, y, w, h;
	char *out;
} query;

static gboolean read_state(gpointer p) {
	query *q = p;
	g_mutex_lock(&q->mu);
	if (win && !shut) {
		q->out = g_strconcat(gtk_label_get_text(GTK_LABEL(header)), "\n", gtk_label_get_text(GTK_LABEL(text)), NULL);
		q->visible = gtk_widget_get_visible(win);
		gtk_window_get_position(GTK_WINDOW(win), &q->x, &q->y);
		gtk_window_get_size(GTK_WINDOW(win), &q->w, &q->h);
	} else {
		q->out = g_strdup("");
	}
	q->done = 1;
	g_cond_signal(&q->cond);
	g_mutex_unlock(&q->mu);
	return G_SOURCE_REMOVE;
}

char *hark_overlay_read(int *visible, int *x, int *y, int *w, int *h) {
	query q = {0};
	g_mutex_init(&q.mu);
	g_cond_init(&q.cond);
	g_idle_add(read_state, &q);
	g_mutex_lock(&q.mu);
	while (!q.done) g_cond_wait(&q.cond, &q.mu);
	g_mutex_unlock(&q.mu);
	g_mutex_clear(&q.mu);
	g_cond_clear(&q.cond);
	*visible = q.visible; *x = q.x; *y = q.y; *w = q.w; *h = q.h;
	char *out = strdup(q.out);
	g_free(q.out);
	return out;
}
