// caretapp is a GTK 3 window with a focused text entry, for the overlay's
// near-the-caret test (overlay_linux_test.go). Each time the cursor moves
// it prints where GTK itself draws it on the screen, "caret X Y HEIGHT",
// which the test holds the overlay's position against (the overlay finds
// the caret through AT-SPI, this through GTK's own layout).
#include <gtk/gtk.h>
#include <stdio.h>

static void report(GtkEntry *e) {
	PangoLayout *l = gtk_entry_get_layout(e);
	int lx, ly;
	gtk_entry_get_layout_offsets(e, &lx, &ly);
	int idx = gtk_entry_text_index_to_layout_index(e, gtk_editable_get_position(GTK_EDITABLE(e)));
	PangoRectangle strong;
	pango_layout_get_cursor_pos(l, idx, &strong, NULL);
	// The layout offsets are relative to the entry's allocation, which is
	// relative to its GdkWindow (the toplevel's: an entry has none).
	GtkWidget *w = GTK_WIDGET(e);
	GtkAllocation a;
	gtk_widget_get_allocation(w, &a);
	int ox, oy;
	gdk_window_get_origin(gtk_widget_get_window(w), &ox, &oy);
	printf("caret %d %d %d\n", ox + a.x + lx + PANGO_PIXELS(strong.x), oy + a.y + ly + PANGO_PIXELS(strong.y),
		PANGO_PIXELS(strong.height));
	fflush(stdout);
}

static void on_cursor(GObject *o, GParamSpec *p, gpointer d) { report(GTK_ENTRY(o)); }

int main(int argc, char **argv) {
	gtk_init(&argc, &argv);
	GtkWidget *win = gtk_window_new(GTK_WINDOW_TOPLEVEL);
	gtk_window_set_title(GTK_WINDOW(win), "caretapp");
	gtk_window_set_default_size(GTK_WINDOW(win), 420, 60);
	gtk_window_move(GTK_WINDOW(win), 60, 80);
	GtkWidget *entry = gtk_entry_new();
	gtk_container_add(GTK_CONTAINER(win), entry);
	g_signal_connect(entry, "notify::cursor-position", G_CALLBACK(on_cursor), NULL);
	g_signal_connect(win, "destroy", G_CALLBACK(gtk_main_quit), NULL);
	gtk_widget_show_all(win);
	gtk_widget_grab_focus(entry);
	printf("ready\n");
	fflush(stdout);
	gtk_main();
	return 0;
}
