package replay

import (
	"fmt"
	"math"
)

// CheckSpeed reports whether speed can pace a replay (Options.Speed): a
// finite number, 0 or more. NaN and the infinities are refused: no delay
// can be scaled by them.
func CheckSpeed(speed float64) error {
	if speed < 0 || math.IsNaN(speed) || math.IsInf(speed, 0) {
		return fmt.Errorf("speed %v: want a finite number ≥ 0 (1 realistic, 2 twice as fast, 0 no delays)", speed)
	}
	return nil
}
