package mcpconfig

import "slices"

// Changes says how one Config differs from the one before (see Diff).
type Changes struct {
	Added   []string `json:"added"`   // names that appeared
	Removed []string `json:"removed"` // names that disappeared
	Changed []string `json:"changed"` // names whose definition, source or state changed
	// ActiveChanged is true when the set or the content of the active servers
	// changed: live sessions need a new mcp_set_servers.
	ActiveChanged bool `json:"activeChanged"`
	// ErrorsChanged is true when the list of errors changed; the new list is
	// in the new Config.
	ErrorsChanged bool `json:"errorsChanged"`
	// PermissionsChanged is true when the permission rules changed.
	PermissionsChanged bool `json:"permissionsChanged"`
}

// Empty reports whether nothing changed.
func (d Changes) Empty() bool {
	return len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Changed) == 0 && !d.ActiveChanged && !d.ErrorsChanged && !d.PermissionsChanged
}

// Diff compares two configurations; old may be nil (everything is added).
// Line and column moves alone are not changes.
func Diff(old, cur *Config) Changes {
	if old == nil {
		old = &Config{}
	}
	d := Changes{Added: []string{}, Removed: []string{}, Changed: []string{}}
	i, j := 0, 0
	for i < len(old.Servers) || j < len(cur.Servers) {
		switch {
		case j == len(cur.Servers) || (i < len(old.Servers) && old.Servers[i].Name < cur.Servers[j].Name):
			d.Removed = append(d.Removed, old.Servers[i].Name)
			i++
		case i == len(old.Servers) || cur.Servers[j].Name < old.Servers[i].Name:
			d.Added = append(d.Added, cur.Servers[j].Name)
			j++
		default:
			if old.Servers[i].fingerprint != cur.Servers[j].fingerprint {
				d.Changed = append(d.Changed, cur.Servers[j].Name)
			}
			i++
			j++
		}
	}
	d.ActiveChanged = string(old.payload) != string(cur.payload) && !(len(old.payload) == 0 && string(cur.payload) == "{}")
	d.ErrorsChanged = !slices.Equal(old.Errors, cur.Errors)
	d.PermissionsChanged = !old.Permissions.equal(cur.Permissions)
	return d
}
