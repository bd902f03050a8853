package slashcmd

import (
	"log/slog"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/models"
)

// SubtypeChanged is the system event claude prints when its commands
// change (a whole new list, the shape of initialize's).
const SubtypeChanged = "commands_changed"

// List is the commands a session's claude offers. Not safe for concurrent
// use: its owner's lock guards it.
type List struct {
	list  []protocol.SlashCommand // what claude offers now (nil: not known yet)
	frame []byte                  // the session/commands push of list (nil when list is)
}

// Parse reads claude's list of commands (the commands of its initialize
// answer or of a system/commands_changed event): at most
// protocol.MaxCommands entries, texts cut at their bounds; an entry whose
// name is not a valid name (empty, too long, with control characters) is
// left out, since a cut name would name another command. offered counts
// the entries claude gave; ok is false when arr is not an array.
func Parse(arr gjson.Result) (list []protocol.SlashCommand, offered int, ok bool) {
	if !arr.IsArray() {
		return nil, 0, false
	}
	list = []protocol.SlashCommand{}
	arr.ForEach(func(_, c gjson.Result) bool {
		offered++
		name := c.Get("name")
		if len(list) == protocol.MaxCommands || name.Type != gjson.String || !validName(name.Str) {
			return true
		}
		cmd := protocol.SlashCommand{
			Name:         name.Str,
			Description:  models.CutText(c.Get("description").String(), protocol.MaxCommandDescriptionBytes),
			ArgumentHint: models.CutText(c.Get("argumentHint").String(), protocol.MaxCommandNameBytes),
		}
		c.Get("aliases").ForEach(func(_, a gjson.Result) bool {
			if a.Type == gjson.String && validName(a.Str) {
				cmd.Aliases = append(cmd.Aliases, a.Str)
			}
			return len(cmd.Aliases) < protocol.MaxCommandAliases
		})
		list = append(list, cmd)
		return true
	})
	return list, offered, true
}

// validName reports whether v can be a SlashCommand's name or alias: 1 to
// MaxCommandNameBytes bytes of valid UTF-8 without control characters.
func validName(v string) bool {
	return models.ValidValue(v) && len(v) <= protocol.MaxCommandNameBytes
}

// Note records claude's list of commands (arr) for session id and, when
// it changed, pushes it (push: the session's hub, called with the owner's
// lock held). A list claude gives empty or that is not an array keeps what
// is known (a claude that names none is taken to have said nothing).
func (c *List) Note(id string, arr gjson.Result, log *slog.Logger, push func([]byte)) {
	list, offered, ok := Parse(arr)
	if offered > len(list) {
		log.Warn("claude offers commands ccproxy does not report", "offered", offered, "kept", len(list), "max", protocol.MaxCommands)
	}
	if !ok || len(list) == 0 || slices.EqualFunc(list, c.list, same) {
		return
	}
	f, err := protocol.EncodePush(protocol.TypeSessionCommands, protocol.SessionCommands{Session: id, Commands: list})
	if err != nil {
		log.Error("session commands", "err", err)
		return
	}
	c.list, c.frame = list, f
	push(f)
}

func same(a, b protocol.SlashCommand) bool {
	return a.Name == b.Name && a.Description == b.Description && a.ArgumentHint == b.ArgumentHint && slices.Equal(a.Aliases, b.Aliases)
}

// Frames is what a subscription turning live for the first time is told
// of the commands: the session/commands push of the list, when one is
// known (a subscription that was live got each change in its place).
func (c *List) Frames() [][]byte {
	if c.frame == nil {
		return nil
	}
	return [][]byte{c.frame}
}
