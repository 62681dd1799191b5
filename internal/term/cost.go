package term

import "fmt"

// CostText shows a cost in US dollars: "$0.0123"; "cost unknown" when
// none of the tokens had a known price (never "$0.0000", which would read
// as free); "$0.0123 + unknown" when only some had.
func CostText(cost float64, unknown bool) string {
	switch {
	case unknown && cost == 0:
		return "cost unknown"
	case unknown:
		return fmt.Sprintf("$%.4f + unknown", cost)
	}
	return fmt.Sprintf("$%.4f", cost)
}
