package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// guardCommands makes the commands below root refuse what cobra lets
// through or words without their name: a group of subcommands (odin mcp,
// odin plugin, odin completion) has no Run, so cobra answered a mistyped
// subcommand (`odin mcp lst`) with the group's help and exit 0, which a
// script takes for success; and an argument-count error ("accepts 1 arg(s),
// received 0") did not say which command or what it takes. Root is left
// alone: a word there is a first message, handled in its RunE.
func guardCommands(root *cobra.Command) {
	// cobra adds completion itself when Execute starts; adding it now lets
	// it be guarded like the others (Execute then finds it present).
	root.InitDefaultCompletionCmd()
	guardHelp(root)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			guardCommand(sub)
			walk(sub)
		}
	}
	walk(root)
}

func guardCommand(c *cobra.Command) {
	if c.HasSubCommands() && !c.Runnable() {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return unknownSubcommand(cmd, args[0])
		}
		return
	}
	check := c.Args
	if check == nil {
		// cobra's default takes any argument when c has no subcommands,
		// and checks none when it has some.
		if !c.HasSubCommands() {
			return
		}
		check = cobra.NoArgs
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		if err == nil {
			return nil
		}
		if len(args) > 0 && strings.HasPrefix(err.Error(), "unknown command") {
			// cobra.NoArgs words every stray argument as a command.
			if cmd.HasSubCommands() {
				return unknownSubcommand(cmd, args[0])
			}
			return commandUsageError(cmd, true, "takes no arguments (got %q)", args[0])
		}
		return commandUsageError(cmd, true, "%v", err)
	}
}

// guardHelp makes `odin help WORD` for a command that does not exist a
// usage error like `odin WORD` in a group: cobra's help found the nearest
// command (root, as it takes a first message) and printed its help with
// exit 0.
func guardHelp(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	var help *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			help = c
		}
	}
	if help == nil || help.Run == nil {
		return
	}
	show := help.Run
	help.Run = nil
	help.RunE = func(cmd *cobra.Command, args []string) error {
		target, rest, err := root.Find(args)
		if err == nil && target != nil && len(rest) > 0 && target.HasSubCommands() {
			return unknownSubcommand(target, rest[0])
		}
		show(cmd, args)
		return nil
	}
}

// unknownSubcommand is the usage error for `odin GROUP word`, with the
// subcommands word is close to (or all of them).
func unknownSubcommand(c *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q", word)
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // as root's
	}
	if s := c.SuggestionsFor(word); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	} else {
		var names []string
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		msg += " (commands: " + strings.Join(names, ", ") + ")"
	}
	return commandUsageError(c, false, "%s", msg)
}

// checkAddDirs refuses an --add-dir that is not a directory: the run went
// on without it, and the tools then refused every path under it as outside
// the project, far from the typo. A relative one is taken against root, as
// the path guard takes it.
func checkAddDirs(root string, dirs []string) error {
	for _, d := range dirs {
		p := d
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return usageError("--add-dir %s: %v", d, errors.Unwrap(err))
		}
		if !fi.IsDir() {
			return usageError("--add-dir %s is not a directory", d)
		}
	}
	return nil
}
