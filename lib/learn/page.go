package learn

// AuthPage returns the data of the /learn/ page (template/learn/index.html):
// both forms empty when message is "", else form with message beside it,
// username filled in and the cursor in its field focus ("username" or
// "password").
func AuthPage(form Form, message, username, focus string) map[string]any {
	data := map[string]any{
		"Title":         LogInForm.Title,
		"LoginError":    "",
		"LoginUser":     "",
		"RegisterError": "",
		"RegisterUser":  "",
		"Focus":         "",
	}
	if message == "" {
		return data
	}
	data["Title"] = form.Title
	data["Focus"] = form.ID + "-" + focus
	if form.ID == RegisterForm.ID {
		data["RegisterError"] = message
		data["RegisterUser"] = username
	} else {
		data["LoginError"] = message
		data["LoginUser"] = username
	}
	return data
}

// focusField is the field of form to type in after a failure with code:
// the username when it is empty or the fault of a registration, else the
// password.
func focusField(form Form, code, username string) string {
	if username == "" || form.ID == RegisterForm.ID && code != "invalid_password" {
		return "username"
	}
	return "password"
}
