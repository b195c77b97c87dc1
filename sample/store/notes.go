package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
)

// Limits of a note, in characters.
const (
	TitleMax = 200
	BodyMax  = 10000
)

// ErrNoteNotFound is returned when a note does not exist or belongs to
// another account: the caller cannot tell which.
var ErrNoteNotFound = errors.New("zealgo: store: note not found")

// Note is a note of an account, visible only to its owner: the notes
// table.
type Note struct {
	ID        int64  `gorm:"column:id;primaryKey;autoIncrement" json:"id"`
	UserID    int64  `gorm:"column:user_id;not null;index" json:"user_id"`
	Title     string `gorm:"column:title;type:text;not null" json:"title"`
	Body      string `gorm:"column:body;type:text;not null" json:"body"`
	CreatedAt int64  `gorm:"column:created_at;not null;autoCreateTime" json:"created_at"` // Unix seconds
	UpdatedAt int64  `gorm:"column:updated_at;not null;autoUpdateTime" json:"updated_at"` // Unix seconds
	// User is the owner, for the foreign key; never loaded.
	User *User `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE" json:"-"`
}

// TableName names the notes table.
func (Note) TableName() string { return "notes" }

// ValidateNote checks a note: a title of 1–200 characters, a body of at
// most 10,000. It returns the broken rule, or nil.
func ValidateNote(title, body string) *ValidationError {
	if n := utf8.RuneCountInString(title); n < 1 || n > TitleMax || strings.TrimSpace(title) == "" {
		return &ValidationError{Field: "title", Code: "invalid_title",
			Message: fmt.Sprintf("The title must be 1 to %d characters.", TitleMax)}
	}
	if utf8.RuneCountInString(body) > BodyMax {
		return &ValidationError{Field: "body", Code: "invalid_body",
			Message: fmt.Sprintf("The body must be at most %d characters.", BodyMax)}
	}
	if !utf8.ValidString(title) || !utf8.ValidString(body) {
		return &ValidationError{Field: "body", Code: "invalid_body", Message: "The note must be valid UTF-8 text."}
	}
	return nil
}

// Notes returns the notes of account userID, the most recently changed
// first; an empty slice, never nil, when there are none.
func (s *Store) Notes(ctx context.Context, userID int64) ([]Note, error) {
	db, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	out := []Note{}
	if err := db.Where("user_id = ?", userID).Order("updated_at DESC, id DESC").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("zealgo: store: list notes: %w", err)
	}
	return out, nil
}

// Note returns note id of account userID, or ErrNoteNotFound.
func (s *Store) Note(ctx context.Context, userID, id int64) (*Note, error) {
	db, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	var n Note
	err = db.Where("id = ? AND user_id = ?", id, userID).Take(&n).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNoteNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("zealgo: store: load note %d: %w", id, err)
	}
	return &n, nil
}

// CreateNote adds a note to account userID after ValidateNote and returns
// it.
func (s *Store) CreateNote(ctx context.Context, userID int64, title, body string) (*Note, error) {
	if err := ValidateNote(title, body); err != nil {
		return nil, err
	}
	db, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now().Unix()
	n := Note{UserID: userID, Title: title, Body: body, CreatedAt: now, UpdatedAt: now}
	if err := db.Omit("User").Create(&n).Error; err != nil {
		if errors.Is(err, gorm.ErrForeignKeyViolated) {
			return nil, fmt.Errorf("zealgo: store: create note: account %d does not exist: %w", userID, err)
		}
		return nil, fmt.Errorf("zealgo: store: create note: %w", err)
	}
	return &n, nil
}

// UpdateNote replaces the title and body of note id of account userID
// after ValidateNote and returns it; ErrNoteNotFound when the account has
// no such note.
func (s *Store) UpdateNote(ctx context.Context, userID, id int64, title, body string) (*Note, error) {
	if err := ValidateNote(title, body); err != nil {
		return nil, err
	}
	db, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	res := db.Model(&Note{}).Where("id = ? AND user_id = ?", id, userID).
		Updates(map[string]any{"title": title, "body": body, "updated_at": time.Now().Unix()})
	if res.Error != nil {
		return nil, fmt.Errorf("zealgo: store: update note %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, ErrNoteNotFound
	}
	return s.Note(ctx, userID, id)
}

// DeleteNote removes note id of account userID; ErrNoteNotFound when the
// account has no such note.
func (s *Store) DeleteNote(ctx context.Context, userID, id int64) error {
	db, err := s.conn(ctx)
	if err != nil {
		return err
	}
	res := db.Where("id = ? AND user_id = ?", id, userID).Delete(&Note{})
	if res.Error != nil {
		return fmt.Errorf("zealgo: store: delete note %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNoteNotFound
	}
	return nil
}
