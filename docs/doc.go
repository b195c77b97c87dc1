// Package docs holds zealgo's guide: index.md and the pages it links. It
// has no code; its test compiles every Go snippet of the pages and of the
// README, and checks their links.
package docs
