package desktop

import (
	goruntime "runtime"

	"github.com/wailsapp/wails/v2/pkg/menu"
	"github.com/wailsapp/wails/v2/pkg/menu/keys"
)

// appMenu is macOS' application menu (Cmd+Q, and the Edit menu that
// WebKit needs for copy and paste). Other systems get no menu bar: the
// page handles Ctrl+1..7 and Ctrl+Q itself.
func appMenu(s *Shell) *menu.Menu {
	if goruntime.GOOS != "darwin" {
		return nil
	}
	m := menu.NewMenu()
	// Quit goes through Shell.Quit: with the menu-bar item shown a plain
	// close only hides the window.
	hark := m.AddSubmenu("Hark")
	// About opens Settings, whose About card shows the version, commit,
	// build date and backends (Wails' own About panel comes only with its
	// default app menu, whose Quit would bypass Shell.Quit).
	hark.AddText("About Hark", nil, func(*menu.CallbackData) { s.Show(); s.emit(EventView, "settings") })
	hark.AddSeparator()
	hark.AddText("Hide Hark", keys.CmdOrCtrl("h"), func(*menu.CallbackData) { s.hide() })
	hark.AddSeparator()
	hark.AddText("Quit Hark", keys.CmdOrCtrl("q"), func(*menu.CallbackData) { s.Quit() })
	m.Append(menu.EditMenu())
	m.Append(menu.WindowMenu())
	return m
}
