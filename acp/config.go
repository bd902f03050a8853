package acp

// Session config options: the permission mode and the model, as ACP
// select options (configOptions in the session/new, load and resume
// answers; session/set_config_option; config_option_update). The mode
// option is the same mode session/set_mode sets; the model option lists
// the models claude offers (the proxy's session/state models) and sets one
// with the proxy's session/setModel.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/protocol"
)

// The ids of the config options.
const (
	ConfigMode  = "mode"
	ConfigModel = "model"
)

// configOptionsLocked is s's config options now (s.mu held): the mode,
// and the model once claude has said which models it offers. A current
// model that is none of the listed values (a full model id) is listed too,
// so that the current value is always one of the options.
func (s *session) configOptionsLocked() []sdk.SessionConfigOption {
	mode := s.mode
	if mode == "" {
		mode = protocol.PermissionModeDefault
	}
	modes := make(sdk.SessionConfigSelectOptionsUngrouped, 0, len(Modes))
	for _, m := range Modes {
		modes = append(modes, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.Id), Name: m.Name, Description: m.Description})
	}
	if !slices.ContainsFunc(Modes, func(m sdk.SessionMode) bool { return string(m.Id) == mode }) {
		modes = append(modes, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(mode), Name: mode})
	}
	opts := []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{
		Id: ConfigMode, Name: "Mode", Category: sdk.Ptr(sdk.SessionConfigOptionCategoryMode), Type: "select",
		Description:  sdk.Ptr("How Claude asks before it acts"),
		CurrentValue: sdk.SessionConfigValueId(mode),
		Options:      sdk.SessionConfigSelectOptions{Ungrouped: &modes},
	}}}
	if len(s.models) == 0 {
		return opts
	}
	models := make(sdk.SessionConfigSelectOptionsUngrouped, 0, len(s.models)+1)
	for _, m := range s.models {
		o := sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.Value), Name: cmpOr(m.DisplayName, m.Value)}
		if m.Description != "" {
			o.Description = sdk.Ptr(m.Description)
		}
		models = append(models, o)
	}
	current := s.model
	if current == "" {
		current = s.models[0].Value
	}
	if !slices.ContainsFunc(s.models, func(m protocol.ModelInfo) bool { return m.Value == current }) {
		models = append(models, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(current), Name: current})
	}
	return append(opts, sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{
		Id: ConfigModel, Name: "Model", Category: sdk.Ptr(sdk.SessionConfigOptionCategoryModel), Type: "select",
		CurrentValue: sdk.SessionConfigValueId(current),
		Options:      sdk.SessionConfigSelectOptions{Ungrouped: &models},
	}})
}

// offersLocked reports whether model is one of the values of the models
// claude offers (s.mu held).
func (s *session) offersLocked(model string) bool {
	return slices.ContainsFunc(s.models, func(m protocol.ModelInfo) bool { return m.Value == model })
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// configOptions is configOptionsLocked under s.mu.
func (s *session) configOptions() []sdk.SessionConfigOption {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.configOptionsLocked()
}

// noteModelsLocked records the model and models of a session/state or a
// subscribe reply (s.mu held); either may be absent (unchanged). It
// reports whether they changed.
func (s *session) noteModelsLocked(model string, models []protocol.ModelInfo) bool {
	changed := false
	if model != "" && model != s.model {
		s.model, changed = model, true
	}
	if models != nil && !slices.Equal(models, s.models) {
		s.models, changed = models, true
	}
	return changed
}

// configKeyLocked is what the editor was last told of s's config options
// (s.mu held): a config_option_update goes when it changes.
func (s *session) configKeyLocked() string {
	var b strings.Builder
	for _, o := range s.configOptionsLocked() {
		fmt.Fprintf(&b, "%s=%s;", o.Select.Id, o.Select.CurrentValue)
		if o.Select.Options.Ungrouped != nil {
			for _, v := range *o.Select.Options.Ungrouped {
				fmt.Fprintf(&b, "%s,", v.Value)
			}
		}
	}
	return b.String()
}

// configUpdate sends the editor a config_option_update of s when its
// options differ from what it was last told (answers and earlier updates).
func (a *Agent) configUpdate(s *session) {
	s.mu.Lock()
	key := s.configKeyLocked()
	if key == s.configSent {
		s.mu.Unlock()
		return
	}
	s.configSent = key
	opts := s.configOptionsLocked()
	s.mu.Unlock()
	u := sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: opts}}
	if err := a.conn.SessionUpdate(a.ctx, sdk.SessionNotification{SessionId: s.acpID, Update: u}); err != nil {
		a.log.Debug("session/update not sent", "err", err)
	}
}

// answeredConfig returns s's config options for an answer (session/new,
// load, resume, set_config_option), noting that the editor knows them.
func (s *session) answeredConfig() []sdk.SessionConfigOption {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.configSent = s.configKeyLocked()
	return s.configOptionsLocked()
}

// SetSessionConfigOption sets the mode (as session/set_mode does) or the
// model (the proxy's session/setModel) of a session, and answers all its
// config options. The value must be one of the option's values; a boolean
// value, an unknown configId or a value not offered is -32602 naming it.
func (a *Agent) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	const method = "session/set_config_option"
	v := p.ValueId
	if v == nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": method + ": value: the options of this agent are selects: a value id, not a boolean"})
	}
	s, err := a.session(v.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	value := string(v.Value)
	switch string(v.ConfigId) {
	case ConfigMode:
		s.mu.Lock()
		current := s.mode
		s.mu.Unlock()
		// The current mode is listed even when it is none of Modes (another
		// client set bypassPermissions): choosing it again is taken.
		if value != current && !slices.ContainsFunc(Modes, func(m sdk.SessionMode) bool { return string(m.Id) == value }) {
			return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%s: value: %q is not one of the modes of configId %q", method, value, ConfigMode)})
		}
		if err := a.setMode(ctx, s, method, value); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
	case ConfigModel:
		s.mu.Lock()
		offered := s.offersLocked(value) || value == s.model
		s.mu.Unlock()
		if !offered {
			return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%s: value: %q is not one of the models of configId %q", method, value, ConfigModel)})
		}
		if err := a.setModel(ctx, s, method, value); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
	default:
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%s: configId: no config option %q (this agent has %q and %q)", method, v.ConfigId, ConfigMode, ConfigModel)})
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: s.answeredConfig()}, nil
}

// setModel has s run model from its next turn (the proxy resumes a
// suspended s, and keeps the model for every later claude of it). s.model
// is set by the session/state with the new model, which the proxy sends
// before this reply (see setMode).
func (a *Agent) setModel(ctx context.Context, s *session, method, model string) error {
	return a.liveRequest(ctx, s, method, func(id string) error {
		return a.b.Request(ctx, protocol.TypeSessionSetModel, &protocol.SessionSetModel{Session: id, Model: model}, nil)
	})
}
